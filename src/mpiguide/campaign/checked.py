"""A checked campaign: its config after every check (schema defaults filled in, scaled,
expanded), the analysis options as the analysis reads them, what its entries added to it (the
algorithm settings they sweep, verify's tuned entries: mpiguide.campaign.expansion), and the facts
the workflow derives from the config in one place each (results directory, looks, blocking,
launch key, kernel builds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.sequential import Looks
from mpiguide.campaign.expansion import ops_calling, tune_libraries, tuned_pairs
from mpiguide.campaign.launch import env_prefix, launch_env, quoted_launcher
from mpiguide.core.paths import campaign_results, deployment_name, kernel_binary_file
from mpiguide.plan.grid import DEFAULTS, GRID_KEYS, INTERLEAVE_KEY
from mpiguide.tune.applied import honours_forced
from mpiguide.tune.library_algorithms import AlgorithmSetting, swept_per_launch

# Which key of an mpi entry starts its runs, by `launch:` (in the workflow: by the executor,
# mpiguide.campaign.executor).
LAUNCH_KEYS = {"local": "launcher", "slurm": "srun"}


@dataclass(frozen=True)
class Campaign:
    """`config` is checked and final; `source` names its files in every message; what the
    entries added to `config` (mpiguide.campaign.expansion): the algorithm settings they sweep,
    and per entry that verify adds the entry whose kernel build it runs (same mpicc)."""

    config: dict[str, Any]
    analysis: AnalysisOptions
    source: str
    settings: tuple[AlgorithmSetting, ...] = ()
    kernel_of: Mapping[str, str] = field(default_factory=dict)

    @property
    def results(self) -> str:
        """`results/<campaign>`, relative to the directory Snakemake runs in."""
        return campaign_results(self.config["campaign"])

    @property
    def mpi(self) -> dict[str, Any]:
        result: dict[str, Any] = self.config["mpi"]
        return result

    @property
    def looks(self) -> Looks:
        """The looks of `runs:`: one for a fixed campaign, a round each for an adaptive one."""
        return Looks.of(self.config["runs"])

    @property
    def blocking(self) -> str:
        """`run`: run NN of every entry of a deployment in one block (mpiguide.campaign.blocks),
        so that comparisons across entries are paired; with one entry there is nothing to block.
        """
        return str(self.config.get("blocking") or ("run" if len(self.mpi) >= 2 else "none"))

    @property
    def launch_key(self) -> str:
        """The key of an mpi entry whose command starts its runs."""
        return LAUNCH_KEYS[self.config["launch"]]

    def launch_key_path(self, mpi: str) -> str:
        """The config key of the command that starts `mpi`'s runs, as messages name it."""
        return f"{self.source}: mpi.{mpi}.{self.launch_key}"

    def launch_command(self, mpi: str) -> str:
        """The command that starts `mpi`'s runs, quoted word by word for a shell, behind what
        every launch adds to the entry's env (launch_env); a command that cannot be split into
        words is refused, naming its key (ConfigError)."""
        command = quoted_launcher(self.mpi[mpi][self.launch_key], self.launch_key_path(mpi))
        return " ".join(filter(None, (env_prefix(launch_env(self.mpi[mpi]["env"])), command)))

    def deployment(self, nodes: int | str, ppn: int | str) -> Mapping[str, Any]:
        """The `deployments:` item of `nodes` x `ppn` (numbers, or wildcards' text)."""
        by_name = {deployment_name(d["nodes"], d["ppn"]): d for d in self.config["deployments"]}
        return by_name[deployment_name(nodes, ppn)]

    def kernel_entry(self, mpi: str) -> str:
        """The entry whose kernel build `mpi` runs: verify's `<entry>.tuned` and
        `<entry>.applied`, and the preset entries of a sweep per launch, run their base's (same
        mpicc)."""
        return self.kernel_of.get(mpi, mpi)

    def _preset(self, mpi: str) -> AlgorithmSetting | None:
        """The setting swept per launch that `mpi` is the entry of, if any."""
        for setting in self.settings:
            if setting.name == mpi and swept_per_launch(setting.library):
                return setting
        return None

    def forces_algorithms(self, mpi: str) -> bool:
        """Whether `mpi`'s inputs hold the experiments that force one of the library's
        algorithms: not an Open MPI `<entry>.applied`'s, whose rules file overrides them, nor a
        preset entry's, which measures the library's choice under its preset."""
        return honours_forced(mpi, self.mpi[mpi].get("library")) and self._preset(mpi) is None

    def ops_of(self, mpi: str) -> list[str] | None:
        """The ops whose experiments `mpi`'s inputs hold: a preset entry's, those that call its
        collective (the others would measure the base entry again under another name); None:
        every op."""
        preset = self._preset(mpi)
        return None if preset is None else ops_calling(self.config, preset.op)

    def kernel_binary(self, mpi: str) -> str:
        return kernel_binary_file(self.results, self.kernel_entry(mpi))

    def built_mpi(self) -> dict[str, Any]:
        """The entries that build a kernel: all but those that run another's (kernel_entry)."""
        return {name: entry for name, entry in self.mpi.items() if self.kernel_entry(name) == name}

    def tuned_pairs(self) -> list[tuple[str, str]]:
        """(entry, entry.tuned) of a verify campaign."""
        return tuned_pairs(self.kernel_of)

    def tune_libraries(self) -> dict[str, str]:
        """libmpiguide-tune builds of a verify campaign: path -> the entry whose mpicc builds it."""
        return tune_libraries(self.config, self.kernel_of)

    def grid_spec(self) -> dict[str, Any]:
        """Only the keys that define the grid: editing anything else never re-plans. The
        campaign's interleave only where it plans something: not the kernel's default, and some
        block without its own. A campaign that pins `interleave: 1`, or sets it in every block,
        keeps the spec, and so the records, its runs were planned with before the key existed."""
        spec = {key: self.config[key] for key in GRID_KEYS}
        interleave = self.config.get(INTERLEAVE_KEY, DEFAULTS["interleave"])
        unset = any(INTERLEAVE_KEY not in block for block in self.config["experiments"])
        if interleave != DEFAULTS["interleave"] and unset:
            spec[INTERLEAVE_KEY] = interleave
        return spec
