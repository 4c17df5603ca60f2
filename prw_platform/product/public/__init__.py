"""The public read model: the released tables (``store``), their row values and fields, the list filters, and the
reads the product API serves (items, merchants, classes, shipping, pictures) behind ``PublicCatalog``."""
