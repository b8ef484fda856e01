"""Latency models: the catalogue, and least-squares fits on synthetic run medians drawn from
known coefficients (Parker et al. 2018's published values)."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from config_support import check_config
from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.cli import main
from mpiguide.core.errors import ConfigError, DataError
from mpiguide.core.package_data import MODEL_CATALOGUE, MODELS_SCHEMA
from mpiguide.reports.model_fit import MODEL_COLUMNS, fit_models
from mpiguide.reports.models import BASES, Selection, load_models

REPO = Path(__file__).resolve().parents[3]
CATALOGUE = load_models(MODEL_CATALOGUE)
NODES = [16, 32, 64, 128, 256, 512, 1024, 2048]  # Parker's Figure 5
SIZES = [4, 64, 1024, 16384, 262144, 1048576]
RUNS = 10
NOISE_US = 0.5  # absolute noise of a run median, microseconds
OPTIONS = AnalysisOptions.with_defaults()


def synthetic_medians(model_id: str, op: str, sizes: list[int] | None, seed: int = 1):
    """medians.parquet-like frame: RUNS run medians per (node count, size) from the model with
    its published coefficients plus Gaussian noise."""
    model = CATALOGUE[model_id]
    coefficients = [model.published[name] for name in model.coefficients]
    rng = np.random.default_rng(seed)
    rows = []
    for nodes in NODES:
        for exp_id, size in enumerate(sizes or [None]):
            n = 0 if size is None else size
            latency = model.predict(coefficients, np.array([n]), np.array([nodes]))[0]
            for run in range(RUNS):
                median = (latency + rng.normal(0, NOISE_US)) * 1e-6
                rows.append((exp_id, op, size, "cray", nodes, 1, run, median, 30))
    columns = ["exp_id", "op", "msg_size", "mpi", "nodes", "ppn", "run", "median_s", "n_kept"]
    medians = pd.DataFrame(rows, columns=columns)
    medians["msg_size"] = medians["msg_size"].astype("Int64")
    return medians


@pytest.mark.parametrize(
    ("model_id", "op", "sizes"),
    [("parker-barrier", "barrier", None), ("parker-bcast", "bcast", SIZES),
     ("parker-allreduce", "allreduce", SIZES), ("hockney", "send", SIZES)],
)  # fmt: skip
def test_published_coefficients_are_recovered_within_their_intervals(model_id, op, sizes):
    medians = synthetic_medians(model_id, op, sizes)
    model = CATALOGUE[model_id]
    table, residuals, _ = fit_models(medians, [Selection(model, (op,))], OPTIONS, "m.parquet")
    assert list(table.columns) == MODEL_COLUMNS
    assert table["parameter"].tolist() == model.coefficients
    for _, row in table.iterrows():
        truth = model.published[row["parameter"]]
        assert row["ci_low"] <= truth <= row["ci_high"], row.to_dict()
        assert row["published"] == truth
    assert (table["n"] == len(medians)).all()
    assert (table["r2"] > 0.99).all()
    # the residuals: one row per experiment and deployment, all on the model
    assert len(residuals) == len(NODES) * len(sizes or [None])
    assert not residuals["off_model"].any()


def test_barrier_estimates_match_parker_closely():
    medians = synthetic_medians("parker-barrier", "barrier", None)
    selection = [Selection(CATALOGUE["parker-barrier"], ("barrier",))]
    table = fit_models(medians, selection, OPTIONS, "m")[0].set_index("parameter")
    assert table.at["alpha", "estimate"] == pytest.approx(-13.5, abs=0.5)
    assert table.at["beta", "estimate"] == pytest.approx(9.87, abs=0.1)


def test_a_point_off_the_model_is_listed():
    medians = synthetic_medians("parker-bcast", "bcast", SIZES)
    # an eager/rendezvous kink: 16 KiB twice as slow on 64 nodes
    kink = (medians["msg_size"] == 16384) & (medians["nodes"] == 64)
    medians.loc[kink, "median_s"] *= 2
    selection = [Selection(CATALOGUE["parker-bcast"], ("bcast",))]
    residuals = fit_models(medians, selection, OPTIONS, "m")[1]
    off = residuals.loc[residuals["off_model"]]
    assert off[["nodes", "msg_size"]].values.tolist() == [[64, 16384]]
    assert off["relative_residual"].iloc[0] > 0.5


def test_coefficients_the_data_cannot_determine_are_an_error():
    medians = synthetic_medians("parker-barrier", "barrier", None)
    one_count = medians.loc[medians["nodes"] == 16]
    selection = [Selection(CATALOGUE["parker-barrier"], ("barrier",))]
    with pytest.raises(DataError, match=r"m: model parker-barrier, mpi cray, op barrier: 10 run "
                       r"medians at p in \[16\] cannot determine the 2 coefficients"):  # fmt: skip
        fit_models(one_count, selection, OPTIONS, "m")


def test_bases_are_those_the_schema_allows():
    schema = yaml.safe_load(MODELS_SCHEMA.read_text())
    allowed = schema["$defs"]["model"]["properties"]["terms"]["items"]["properties"]["basis"]
    assert allowed["enum"] == list(BASES)


def test_catalogue_has_parkers_models_with_their_equations():
    assert list(CATALOGUE) == ["hockney", "parker-barrier", "parker-bcast", "parker-allreduce"]
    for model_id, equation in [("hockney", "(1)"), ("parker-barrier", "(2)"),
                               ("parker-bcast", "(3)"), ("parker-allreduce", "(4)")]:  # fmt: skip
        assert f"Parker et al. 2018, eq. {equation}" in CATALOGUE[model_id].source
    assert CATALOGUE["parker-barrier"].published == {"alpha": -13.5, "beta": 9.87}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"source": "s", "text": "t", "terms": [{"coefficient": "a", "basis": "exp(p)"}]},
         r"m\.yaml: bad\.terms\[0\]\.basis: 'exp\(p\)' is not one of"),
        ({"source": "s", "text": "t", "terms": [{"coefficient": "a", "basis": "1"},
                                                 {"coefficient": "a", "basis": "n"}]},
         r"m\.yaml: bad\.terms: coefficient 'a' appears twice"),
        ({"source": "s", "text": "t", "terms": [{"coefficient": "a", "basis": "1"}],
          "published": {"b": 1.0}},
         r"m\.yaml: bad\.published\.b: not a coefficient of the model; its coefficients: a"),
        ({"source": "s", "text": "t"}, r"m\.yaml: bad: 'terms' is a required property"),
    ],
)  # fmt: skip
def test_bad_catalogue_entries_name_file_and_key(tmp_path, entry, message):
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"bad": entry}))
    with pytest.raises(ConfigError, match=message):
        load_models(path)


def test_fit_command_writes_tables_and_plots(tmp_path, capsys):
    medians = synthetic_medians("parker-allreduce", "allreduce", SIZES)
    medians.to_parquet(tmp_path / "medians.parquet")
    selection = json.dumps([{"model": "parker-allreduce", "ops": ["allreduce"]}])
    status = main(["fit", "--medians", str(tmp_path / "medians.parquet"),
                   "--models", str(MODEL_CATALOGUE),
                   "--models-json", selection, "--out", str(tmp_path / "models")])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    table = pd.read_csv(tmp_path / "models" / "models.csv")
    assert table["parameter"].tolist() == ["gamma", "delta", "alpha", "beta"]
    assert (tmp_path / "models" / "residuals.csv").is_file()
    plots = [p.name for p in (tmp_path / "models" / "plots").iterdir()]
    assert plots == ["parker-allreduce-cray-allreduce.png"]


@pytest.mark.parametrize(
    ("models_json", "message"),
    [('[{"model": "parker-barrier"}]', r"--models-json: models\[0\]: 'ops' is a required"),
     ('[{"model": "nope", "ops": ["barrier"]}]',
      r"--models-json: models\[0\]\.model: unknown model 'nope'; the catalogue has hockney")],
)  # fmt: skip
def test_fit_command_refuses_a_bad_selection(tmp_path, capsys, models_json, message):
    synthetic_medians("parker-barrier", "barrier", None).to_parquet(tmp_path / "m.parquet")
    status = main(["fit", "--medians", str(tmp_path / "m.parquet"),
                   "--models", str(MODEL_CATALOGUE),
                   "--models-json", models_json, "--out", str(tmp_path / "out")])  # fmt: skip
    assert status == 2
    assert re.search(message, capsys.readouterr().err)


def campaign(models, deployments=({"nodes": 1, "ppn": 2}, {"nodes": 1, "ppn": 4})):
    return {
        "campaign": "c",
        "mpi": {"openmpi": {"mpicc": "mpicc", "launcher": "mpirun", "srun": "srun", "env": {}}},
        "deployments": list(deployments),
        "experiments": [{"op": ["barrier", "bcast"], "msg_size": [4, 1024]}],
        "nrep": 10,
        "guidelines": [],
        "analysis": {"varied": "msg_size"},
        "models": models,
    }


@pytest.mark.parametrize(
    ("models", "message"),
    [([{"model": "parker-bcast", "ops": ["allreduce"]}],
      r"c\.yaml: models\[0\]\.ops\[0\]: 'allreduce' is not measured in this campaign"),
     ([{"model": "parker-bcast", "ops": ["barrier"]}],
      r"c\.yaml: models\[0\]\.ops\[0\]: parker-bcast depends on the message size n, which "
      r"'barrier' does not have"),
     ([{"model": "amdahl", "ops": ["barrier"]}], r"c\.yaml: models\[0\]\.model: unknown model")],
)  # fmt: skip
def test_campaign_models_are_checked(models, message):
    with pytest.raises(ConfigError, match=message):
        check_config(campaign(models), {}, "c.yaml")


def test_a_model_the_campaign_cannot_determine_is_refused_before_measuring():
    models = [{"model": "parker-barrier", "ops": ["barrier"]}]
    config = campaign(models, deployments=[{"nodes": 1, "ppn": 2}, {"nodes": 2, "ppn": 1}])
    message = (r"c\.yaml: models\[0\]\.ops\[0\]: parker-barrier \(l = .*\) cannot be fitted "
               r"to barrier measured at p in \[2\]: too few process counts")  # fmt: skip
    with pytest.raises(ConfigError, match=message):
        check_config(config, {}, "c.yaml")


def test_campaign_models_that_apply_pass():
    models = [{"model": "parker-barrier", "ops": ["barrier"]},
              {"model": "parker-bcast", "ops": ["bcast"]}]  # fmt: skip
    check_config(campaign(models), {}, "c.yaml")


def test_relative_weighting_lets_small_messages_count():
    """Latencies over four decades with 5 % multiplicative noise: absolute least squares fits
    the large messages and misses the small ones by far; relative weighting fits all sizes."""
    model = CATALOGUE["parker-bcast"]
    medians = synthetic_medians("parker-bcast", "bcast", SIZES)
    rng = np.random.default_rng(2)
    medians["median_s"] *= np.exp(rng.normal(0, 0.05, len(medians)))
    worst = {}
    for weighting in ("absolute", "relative"):
        options = AnalysisOptions.with_defaults(model_weighting=weighting, model_tolerance=0.2)
        table, residuals, _ = fit_models(medians, [Selection(model, ("bcast",))], options, "m")
        worst[weighting] = residuals["relative_residual"].abs().max()
        if weighting == "relative":
            estimates = table.set_index("parameter")
            for name in model.coefficients:
                row = estimates.loc[name]
                assert row["ci_low"] <= model.published[name] <= row["ci_high"]
            assert not residuals["off_model"].any()
    assert worst["relative"] < 0.2 < worst["absolute"]
