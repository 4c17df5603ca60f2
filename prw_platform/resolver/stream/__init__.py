"""The accepted-change stream of a catalog, resolver side: the cursor that numbers positions (``cursor``), the
outbox that holds the events (``outbox``), the relay that publishes them (``relay``) and retention, which prunes
what every consumer has durably applied (``retention``). docs/architecture.md: Rooms."""
