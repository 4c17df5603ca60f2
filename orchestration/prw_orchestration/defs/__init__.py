"""Dagster definitions per area: pipeline (sensors + jobs), state (assets + invariant checks), maintenance."""
