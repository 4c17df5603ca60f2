"""Product rebuild and history epoch fencing in Dagster (seed 003 if_projection_bootstrap).

* ``product_rebuild`` job: an operator launches it from the UI with config (tenant, catalog, optional target H).
  Its op runs ``Platform.product_rebuild`` (the same operation as ``prw product rebuild``), logging each phase's
  progress (export, load, catch up, cutover) and recording a materialization of the ``product_projection`` asset
  with the new generation, W and H. With ``abandon_stale: true`` it first abandons the catalog's running rebuild
  whose process died (its heartbeat older than PRW_REBUILD_STALE_AFTER_SECONDS; ``force_abandon: true`` also a live
  one), as ``prw product rebuild --abandon [--force]`` does, then rebuilds.
* ``epoch_fence`` job: fences restored history (``Platform.epoch_fencing``, as ``prw epoch fence --yes``). It needs
  explicit config to run: the tenant, the catalog and ``confirm`` spelling ``fence <tenant>/<catalog>``; anything
  else fails the run before any change.

Neither is queue-driven (no sensor, no schedule): an operator starts them. The old generations they leave are
dropped by the ``rebuild-cleanup`` stage's scheduled job.
"""

import time

import dagster as dg

from prw_orchestration.resources import PlatformResource
from prw_platform.services import RebuildResult

PRODUCT_PROJECTION = dg.AssetKey("product_projection")


class RebuildConfig(dg.Config):
    tenant: str
    catalog: str
    #: The committed position H to cut over at; None: the head once caught up.
    target: int | None = None
    #: First abandon the catalog's running rebuild if its process died (heartbeat older than
    #: PRW_REBUILD_STALE_AFTER_SECONDS): ``prw product rebuild --abandon``. None running: nothing to abandon.
    abandon_stale: bool = False
    #: With ``abandon_stale``: abandon it even though its heartbeat is fresh (``--force``).
    force_abandon: bool = False


class FenceConfig(dg.Config):
    tenant: str
    catalog: str
    #: Must read ``fence <tenant>/<catalog>``: a fence abandons the current history epoch for good.
    confirm: str
    reason: str = "resolver database restored"


class _LoggedProgress:
    """Logs a rebuild's progress: every phase change, and within a phase at most every few seconds."""

    def __init__(self, context: dg.OpExecutionContext, every_seconds: float = 5.0) -> None:
        self._context = context
        self._every = every_seconds
        self._phase = ""
        self._logged = 0.0

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if phase != self._phase or now - self._logged >= self._every or (total is not None and done >= total):
            self._context.log.info(f"{phase}: {done}" + (f" / {total}" if total is not None else ""))
            self._phase, self._logged = phase, now


def rebuild_metadata(result: RebuildResult) -> dict[str, object]:
    return {
        "rebuild_id": result.rebuild_id,
        "tenant_id": result.tenant_id,
        "catalog_id": result.catalog_id,
        "history_epoch": result.history_epoch,
        "export_id": result.export_id,
        "generation": result.generation,
        "previous_generation": result.previous_generation,
        "start_position_w": result.start_position,
        "cutover_position_h": result.target_position,
        "rows_loaded": result.loaded_rows,
        "tail_events_applied": result.caught_up,
        "seconds": round(result.seconds, 1),
    }


@dg.op(name="rebuild_product_projection", description="Rebuild a catalog's projection into a new generation.")
def rebuild_product_projection(
    context: dg.OpExecutionContext, config: RebuildConfig, platform: PlatformResource
) -> dg.Output[int]:
    from prw_platform.services import RebuildFailed

    rebuild = platform.platform.product_rebuild
    if config.abandon_stale:
        try:
            abandoned = rebuild.abandon(config.tenant, config.catalog, force=config.force_abandon)
        except RebuildFailed as failed:
            if failed.code != "NO_ACTIVE_REBUILD":
                raise dg.Failure(f"{failed.code}: {failed} (nothing was changed)") from failed
            context.log.info(f"no running rebuild of {config.tenant}/{config.catalog} to abandon")
        else:
            context.log.warning(
                f"abandoned rebuild {abandoned.rebuild_id} ({abandoned.status_before}, heartbeat "
                f"{abandoned.heartbeat_age_seconds:.0f} s old); its generation {abandoned.generation} is left to "
                f"the rebuild cleanup; lease {'released' if abandoned.lease_released else 'not released'}"
            )
    try:
        result = rebuild.run(
            config.tenant, config.catalog, target=config.target, on_progress=_LoggedProgress(context)
        )
    except RebuildFailed as failed:
        raise dg.Failure(f"{failed.code}: {failed} (nothing was swapped)") from failed
    context.log.info(f"cut over to generation {result.generation} at position {result.target_position}")
    context.log_event(
        dg.AssetMaterialization(asset_key=PRODUCT_PROJECTION, metadata=rebuild_metadata(result))
    )
    return dg.Output(result.target_position, metadata=rebuild_metadata(result))


@dg.job(
    name="product_rebuild",
    description="Rebuild a catalog's product projection from a snapshot export into an isolated generation, catch "
    "up the retained tail through H, then cut over the serving generation and the live cursor atomically "
    "(config: tenant, catalog, target). Same as `prw product rebuild`.",
    tags={"prw/operation": "product_rebuild"},
)
def product_rebuild() -> None:
    rebuild_product_projection()


@dg.op(
    name="fence_history_epoch", description="Fence restored history (a NEW epoch) and rebuild the product."
)
def fence_history_epoch(
    context: dg.OpExecutionContext, config: FenceConfig, platform: PlatformResource
) -> dg.Output[str]:
    expected = f"fence {config.tenant}/{config.catalog}"
    if config.confirm != expected:
        raise dg.Failure(f"refused: config.confirm must read {expected!r} (nothing was changed)")
    from prw_platform.services import FenceRefused, RebuildFailed

    try:
        result = platform.platform.epoch_fencing.fence(
            config.tenant,
            config.catalog,
            config.reason,
            on_progress=_LoggedProgress(context),
            on_step=context.log.info,
        )
    except (RebuildFailed, FenceRefused) as failed:
        raise dg.Failure(
            f"{failed.code}: {failed} (the stream stays fenced and paused: run again)"
        ) from failed
    metadata = {
        **rebuild_metadata(result.rebuild),
        "previous_epoch": result.previous_epoch,
        "new_epoch": result.new_epoch,
        "fenced_epochs": ", ".join(result.fenced_epochs) or "none",
    }
    context.log_event(dg.AssetMaterialization(asset_key=PRODUCT_PROJECTION, metadata=metadata))
    return dg.Output(result.new_epoch, metadata=metadata)


@dg.job(
    name="epoch_fence",
    description="After a restore of the resolver database: pause serving, fence old workers, issue a NEW epoch in "
    "the control database, rebuild the product from restored state, resume. Needs explicit config (tenant, "
    "catalog, confirm: 'fence <tenant>/<catalog>'). Same as `prw epoch fence --yes`.",
    tags={"prw/operation": "epoch_fence"},
)
def epoch_fence() -> None:
    fence_history_epoch()


REBUILD_JOBS = [product_rebuild, epoch_fence]
