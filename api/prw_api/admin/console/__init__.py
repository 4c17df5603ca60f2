"""The review console: server-rendered pages on the admin origin, under ``/console``.

Jinja2 templates, one small CSS file and one small script for the keyboard shortcuts; no build step, no
framework. The pages use the admin origin's session cookie, its roles and its CSRF token, and decide through the
same decision core as ``POST /v1/decisions`` (if_review_decision, AW-01), with an Idempotency-Key per form.
"""

from prw_api.admin.console.routes import install_console

__all__ = ["install_console"]
