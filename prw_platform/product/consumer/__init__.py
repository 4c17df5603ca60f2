"""The accepted-change consumer (AW-04): apply one delivery in one product transaction, ack after commit."""

from prw_platform.product.consumer.apply import BatchEntry, apply_batch, apply_delivery
from prw_platform.product.consumer.outcomes import DeliveryResult, Outcome

__all__ = ["BatchEntry", "DeliveryResult", "Outcome", "apply_batch", "apply_delivery"]
