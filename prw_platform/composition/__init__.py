"""The parts ``Platform`` is assembled from, one mixin per side over ``Shared`` (so every service stays
``platform.<service>``): ``shared``, ``resolver``, ``curation``, ``product``, and ``platform``, which joins them.
Internal: edges use ``prw_platform.bootstrap``, which builds the platform and registers its stages.
"""
