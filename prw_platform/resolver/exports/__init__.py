"""What the resolver hands out of its stream besides the relay: the event export a consumer reads to close gaps
(``events``) and the snapshot exports a rebuild starts from (``snapshots``). docs/architecture.md: Rooms."""
