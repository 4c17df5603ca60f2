"""PRW identity rule ``scored_match``: a calibrated match probability per candidate (see README.md)."""

from prw_identity_scored.generation import Generation, GenerationError, default_generation
from prw_identity_scored.rule import ScoredMatch

__all__ = ["Generation", "GenerationError", "ScoredMatch", "default_generation"]
