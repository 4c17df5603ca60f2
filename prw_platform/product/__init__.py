"""The product service core: the accepted-change consumer (AW-04), releases, and the public read model.

Shares only the event contract (``prw_platform.contracts``) and the queue with the resolver; it never imports
``prw_platform.resolver`` (docs/architecture.md: Layers).
"""
