"""The `prw` subcommands, one module per area; `prw_cli.main` registers them."""
