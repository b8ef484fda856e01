"""What a campaign's runs cost, said before anything runs (also by a dry run), a deployment
that oversubscribes this machine warned about, a run job that cannot finish within its walltime
refused then rather than killed after hours, and one that typically would not warned about.
"""

from __future__ import annotations

from collections.abc import Callable

from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.summary import MODEL as KERNEL_TIME_MODEL
from mpiguide.campaign.summary import (
    available_cores,
    describe_run,
    oversubscriptions,
    run_seconds,
)
from mpiguide.campaign.walltime import (
    check_walltime,
    least_run_seconds,
    run_jobs,
    typical_walltime_warnings,
)
from mpiguide.plan.grid import build_grid


def preflight(
    campaign: Campaign,
    runtime_minutes: Callable[[str], float | None],
    announce: Callable[[str], None],
    warn: Callable[[str], None],
    cores: int | None = None,
) -> None:
    """Announce the estimated cost of the runs and warn of each deployment with more ranks
    than this machine's `cores` (default: those this process may run on), whose timings would
    measure time slices; then check each run rule's `runtime` (minutes, None: no limit)
    against the least time its jobs take (ConfigError), and warn of each whose typical
    estimate exceeds it."""
    config, source = campaign.config, campaign.source
    grid = build_grid(campaign.grid_spec(), source)
    typical = run_seconds(config, grid)
    announce(
        "mpiguide: "
        + describe_run(typical, least_run_seconds(grid))
        + f" (an estimate: {KERNEL_TIME_MODEL})"
    )
    for oversubscribed in oversubscriptions(config, cores or available_cores()):
        warn(f"mpiguide: {source}: {oversubscribed.warning()}")
    runtimes = {rule: runtime_minutes(rule) for rule in run_jobs(config, campaign.blocking)}
    check_walltime(config, grid, campaign.blocking, runtimes, source)
    for warning in typical_walltime_warnings(config, typical, campaign.blocking, runtimes, source):
        warn(f"mpiguide: {warning}")
