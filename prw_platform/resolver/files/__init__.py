"""Managed catalog files (seed 004, STATE-COM-CAT-004): pictures of items and product classes, their lifecycle
as data (``lifecycle``), the file rows (``store``), the records that reference them (``records``), the saves
(``service``) and the sweep and cleanup consumer (``cleanup``)."""
