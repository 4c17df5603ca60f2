"""The demo's tenant, catalog and collector identities. ``prw demo`` provisions them; ``prw dev`` serves that
catalog by default. Constants only, so that ``prw dev`` reads them without importing the demo (Dagster, the apps)."""

TENANT = "ten_primary"
CATALOG = "cat_primary"
WORKER = "cw_prw_demo"
INSTANCE = "ci_prw_demo_01"
