"""The prw command (typer)."""
