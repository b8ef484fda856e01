"""Guideline catalogue, pairing and verdicts on synthetic run medians with known answers."""

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats as scipy_stats

from mpiguide.analysis.analysis_types import AnalysisOptions, Guideline
from mpiguide.analysis.catalogue import load_catalogue, resolve
from mpiguide.analysis.guidelines import evaluate, first_runs
from mpiguide.analysis.stats import hodges_lehmann_ratios, paired_hodges_lehmann_ratios
from mpiguide.core.columns import PAGE_FAULT_VALUES
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE

CATALOGUE = GUIDELINE_CATALOGUE
RUNS = 10
SIZES = (256, 1024, 4096)


def experiment(exp_id: int, op: str, msg_size: int, **parameters) -> dict:
    row = dict(
        exp_id=exp_id, op=op, msg_size=msg_size, dtype="char", nrep=30, work=None,
        topology="cart", ndim=2, nfin=0, radius=None, ordering=None, constructor="cart",
        reorder=0, root=None, sync="dissemination", max_time=0.0,
    )  # fmt: skip
    row.update(parameters)
    return row


def run_medians(rows: list[dict], factor: dict[int, float], noise: float, seed: int = 0):
    """medians.parquet-like frame: RUNS run medians per experiment, typical time 1 ms x factor."""
    rng = np.random.default_rng(seed)
    grid = pd.DataFrame(rows)
    frames = []
    for run in range(RUNS):
        frame = grid.assign(mpi="openmpi", nodes=1, ppn=2, run=run, n_kept=30)
        typical = 1e-3 * grid["exp_id"].map(factor).fillna(1.0).to_numpy()
        frame["median_s"] = typical * np.exp(rng.normal(0, noise, len(grid)))
        frames.append(frame)
    medians = pd.concat(frames, ignore_index=True)
    for column in ("work", "ndim", "nfin", "radius", "reorder", "root"):
        medians[column] = medians[column].astype("Int64")
    for column in ("op", "dtype", "topology", "ordering", "constructor", "sync", "mpi"):
        medians[column] = medians[column].astype("category")
    return medians


def guideline(relation="le", **entry) -> Guideline:
    entry = {"source": "test", "text": "test", "relation": relation, **entry}
    return resolve([{"id": "G", **entry}], {}, "test.yaml")[0]


def allgather_vs_alltoall(lhs_factor: float, noise: float = 0.01):
    rows = [experiment(i, "neighbor_allgather", s) for i, s in enumerate(SIZES)]
    rows += [experiment(10 + i, "neighbor_alltoall", s) for i, s in enumerate(SIZES)]
    return run_medians(rows, {i: lhs_factor for i in range(len(SIZES))}, noise)


GL4_LIKE = {"lhs": {"op": "neighbor_allgather"}, "rhs": {"op": "neighbor_alltoall"}}


def test_planted_ratio_is_violated():
    tests = evaluate(
        allgather_vs_alltoall(1.5), [guideline(**GL4_LIKE)], AnalysisOptions.with_defaults(), "t"
    )
    assert len(tests) == 3
    assert tests["violated"].all()
    assert tests["violation_ratio"].to_numpy() == pytest.approx(1.5, rel=0.02)
    assert tests["hl_ratio"].to_numpy() == pytest.approx(1.5, rel=0.02)
    assert (tests["hl_low"] <= tests["hl_ratio"]).all()
    assert (tests["hl_ratio"] <= tests["hl_high"]).all()
    assert (tests["hl_high"] / tests["hl_low"] < 1.05).all()  # tight noise, narrow interval
    assert tests["op"].tolist() == ["neighbor_allgather|neighbor_alltoall"] * 3
    assert tests["msg_size"].tolist() == ["256", "1024", "4096"]
    assert tests["group"].nunique() == 1  # differing only in msg_size
    assert (tests["n_lhs"] == RUNS).all() and (tests["n_rhs"] == RUNS).all()


def test_identical_distributions_are_not_violated():
    tests = evaluate(
        allgather_vs_alltoall(1.0), [guideline(**GL4_LIKE)], AnalysisOptions.with_defaults(), "t"
    )
    assert len(tests) == 3
    assert not tests["violated"].any()


def test_faster_lhs_violates_approx_but_not_le():
    medians = allgather_vs_alltoall(1 / 1.5)
    le = evaluate(medians, [guideline("le", **GL4_LIKE)], AnalysisOptions.with_defaults(), "t")
    approx = evaluate(
        medians, [guideline("approx", **GL4_LIKE)], AnalysisOptions.with_defaults(), "t"
    )
    assert not le["violated"].any()
    assert approx["violated"].all()


def test_slower_lhs_violates_approx():
    tests = evaluate(allgather_vs_alltoall(1.5), [guideline("approx", **GL4_LIKE)],
                     AnalysisOptions.with_defaults(), "t")  # fmt: skip
    assert tests["violated"].all()


def test_ratio_below_v_thres_is_not_violated_even_when_significant():
    tests = evaluate(
        allgather_vs_alltoall(1.02, noise=0.001),
        [guideline(**GL4_LIKE)],
        AnalysisOptions.with_defaults(),
        "t",
    )
    assert (tests["p_value"] < 0.001).all()
    assert not tests["violated"].any()


def test_not_applicable_values_match_anything():
    # allgather on MPI_COMM_WORLD has no ordering/constructor/ndim; the full topology has
    # two orderings: each allgather pairs with both, and with nothing of another msg_size.
    none = dict(topology="none", ndim=None, nfin=None, constructor=None, reorder=None)
    full = dict(topology="full", ndim=None, nfin=None, constructor="graph_adj")
    rows = [experiment(1, "allgather", 256, **none), experiment(2, "allgather", 1024, **none)]
    rows += [experiment(3, "neighbor_allgather", 256, ordering="LINEAR", **full)]
    rows += [experiment(4, "neighbor_allgather", 256, ordering="RAND", **full)]
    rows += [experiment(5, "neighbor_allgather", 1024, ordering="RAND", **full)]
    g = guideline(lhs={"op": "allgather", "topology": "none"},
                  rhs={"op": "neighbor_allgather", "topology": "full"})  # fmt: skip
    tests = evaluate(run_medians(rows, {}, 0.01), [g], AnalysisOptions.with_defaults(), "t")
    pairs = sorted(zip(tests["lhs_exp_id"], tests["rhs_exp_id"], strict=True))
    assert pairs == [(1, 3), (1, 4), (2, 5)]
    assert sorted(tests["ordering"]) == ["|LINEAR", "|RAND", "|RAND"]  # lhs: not applicable
    assert set(tests["ndim"]) == {""}  # applicable to neither side
    # groups: the ordering distinguishes the series, msg_size does not
    assert tests.groupby("ordering")["group"].nunique().to_dict() == {"|LINEAR": 1, "|RAND": 1}
    assert tests["group"].nunique() == 2


def test_a_parameter_both_selectors_fix_alike_must_agree():
    # op listed alike on both sides pins the operations compared: allgather with allgather,
    # alltoall with alltoall, never one with the other (reorder is what is compared).
    rows = [experiment(i, op, 256, reorder=r) for i, (op, r) in enumerate(
        [("neighbor_allgather", 1), ("neighbor_allgather", 0), ("neighbor_alltoall", 1),
         ("neighbor_alltoall", 0), ("topo_create", 1), ("topo_create", 0)])]  # fmt: skip
    ops = ["neighbor_allgather", "neighbor_alltoall"]
    g = guideline(lhs={"op": ops, "reorder": 1}, rhs={"op": list(reversed(ops)), "reorder": 0})
    tests = evaluate(run_medians(rows, {}, 0.01), [g], AnalysisOptions.with_defaults(), "t")
    assert sorted(zip(tests["lhs_exp_id"], tests["rhs_exp_id"], strict=True)) == [(0, 1), (2, 3)]


def test_free_parameters_must_agree():
    rows = [experiment(1, "neighbor_allgather", 256, reorder=0)]
    rows += [experiment(2, "neighbor_alltoall", 256, reorder=1)]
    tests = evaluate(
        run_medians(rows, {}, 0.01), [guideline(**GL4_LIKE)], AnalysisOptions.with_defaults(), "t"
    )
    assert tests.empty


def test_pairs_and_list_selectors():
    rows = [experiment(i, "neighbor_alltoall", 256, topology="vonneumann", radius=1,
                       ordering=o, constructor="graph_adj")
            for i, o in enumerate(["FMAJ", "LMAJ", "RAND"])]  # fmt: skip
    pairs = guideline("approx", pairs=[
        {"lhs": {"ordering": "FMAJ"}, "rhs": {"ordering": "RAND"}},
        {"lhs": {"ordering": "LMAJ"}, "rhs": {"ordering": "RAND"}},
    ])  # fmt: skip
    listed = guideline("approx", lhs={"ordering": ["FMAJ", "LMAJ"]}, rhs={"ordering": "RAND"})
    for g in (pairs, listed):
        tests = evaluate(
            run_medians(rows, {0: 1.3}, 0.01), [g], AnalysisOptions.with_defaults(), "t"
        )
        assert sorted(tests["ordering"]) == ["FMAJ|RAND", "LMAJ|RAND"]
        assert tests.set_index("lhs_exp_id")["violated"].to_dict() == {0: True, 1: False}


def test_monotone_pairs_neighbouring_values():
    rows = [experiment(i, "neighbor_alltoall", s) for i, s in enumerate(SIZES)]
    g = guideline("monotone", select={"op": "neighbor_alltoall"})
    tests = evaluate(run_medians(rows, {0: 1.0, 1: 2.0, 2: 1.0}, 0.01), [g],
                     AnalysisOptions.with_defaults(), "t")  # fmt: skip
    assert tests["msg_size"].tolist() == ["256|1024", "1024|4096"]
    assert tests["violated"].tolist() == [False, True]
    assert tests["group"].nunique() == 1


def test_correction_adjusts_within_a_guideline():
    medians = allgather_vs_alltoall(1.5)
    plain = evaluate(medians, [guideline(**GL4_LIKE)], AnalysisOptions.with_defaults(), "t")
    holm = evaluate(
        medians, [guideline(**GL4_LIKE)], AnalysisOptions.with_defaults(correction="holm"), "t"
    )
    assert (plain["p_adjusted"] == plain["p_value"]).all()
    assert (holm["p_adjusted"] >= holm["p_value"]).all()
    assert (holm["p_adjusted"] > holm["p_value"]).any()


def test_catalogue_holds_the_papers_guidelines():
    catalogue = load_catalogue(CATALOGUE)
    assert {f"GL{i}" for i in range(1, 13)} <= set(catalogue)
    for entry in catalogue.values():
        assert entry["source"] and entry["text"]
    resolved = {g.id: g for g in resolve(list(catalogue), catalogue, "c")}
    assert resolved["GL10"].relation == resolved["GL11"].relation == "approx"
    assert len(resolved["GL11"].comparisons) == 4  # FMAJ-LMAJ, FMAJ-RAND, LMAJ-RAND, LINEAR-RAND


VALID = {"source": "s", "text": "t", "relation": "le", "lhs": {"op": "a"}, "rhs": {"op": "b"}}
BOTH_FORMS = {"pairs": [{"lhs": {"op": "a"}, "rhs": {"op": "b"}}]}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({**VALID, "relation": "lt"}, "GL0.relation: 'lt' is not one of"),
        ({**VALID, "rhs": None}, "GL0.rhs"),
        ({key: v for key, v in VALID.items() if key != "rhs"}, "GL0: needs `lhs` and `rhs`"),
        ({**VALID, **BOTH_FORMS}, "GL0: needs `lhs` and `rhs`, or `pairs`"),
        ({**VALID, "lhs": {"colour": "a"}}, "GL0.lhs.colour: not a parameter"),
        ({key: v for key, v in VALID.items() if key != "source"}, "'source' is a required"),
        ({**VALID, "lhs": {"op": "a;rm"}}, "GL0.lhs.op: 'a;rm' does not match"),
        ({**VALID, "lhs": {"op": "a\n"}}, "GL0.lhs.op: 'a\\n' does not match '^[A-Za-z0-9_.+-]+$'"),
        (
            {**VALID, "lhs": {"op\n": "a"}},
            "GL0.lhs: name 'op\\n' is not allowed: it must match '^[a-z][a-z0-9_]*$'",
        ),
    ],
)
def test_bad_catalogue_entries_name_file_and_key(tmp_path, entry, message):
    path = tmp_path / "guidelines.yaml"
    path.write_text(yaml.safe_dump({"GL0": entry}))
    with pytest.raises(ConfigError, match=str(path)) as error:
        load_catalogue(path)
    assert message in str(error.value)


def test_a_job_validates_the_entries_its_selection_uses(tmp_path):
    """`used` (a campaign's guidelines: a job's) validates the entries it names, every id, and
    no other entry: the workflow, as it is read, and `validate` check the whole file."""
    path = tmp_path / "guidelines.yaml"
    path.write_text(yaml.safe_dump({"GL0": VALID, "BAD": {**VALID, "relation": "lt"}}))
    selection = ["GL0", {"id": "INLINE", **VALID}]
    assert set(load_catalogue(path, selection)) == {"GL0", "BAD"}
    for used in (None, ["BAD"], ["GL0", "BAD"]):
        with pytest.raises(ConfigError, match=r"BAD\.relation: 'lt' is not one of"):
            load_catalogue(path, used)
    path.write_text(yaml.safe_dump({"GL0": VALID, "GL0\n": VALID}))
    with pytest.raises(ConfigError, match=r"guideline id 'GL0\\n' must match"):
        load_catalogue(path, ["GL0"])


def test_an_id_with_a_trailing_newline_is_refused(tmp_path):
    path = tmp_path / "guidelines.yaml"
    path.write_text(yaml.safe_dump({"GL0\n": VALID}))
    with pytest.raises(ConfigError) as error:
        load_catalogue(path)
    assert str(error.value) == (
        f"{path}: guideline id 'GL0\\n' must match ^[A-Za-z][A-Za-z0-9_.-]{{0,63}}$"
    )


def test_missing_relation_is_named_with_its_values(tmp_path):
    # the schema's if/then (monotone needs select) used to report "'select' is required"
    path = tmp_path / "guidelines.yaml"
    for entry in ({**VALID}, {**VALID, "lhs": None, "rhs": None, "select": {"op": "a"}}):
        entry = {key: value for key, value in entry.items() if key != "relation" and value}
        path.write_text(yaml.safe_dump({"GL0": entry}))
        with pytest.raises(ConfigError) as error:
            load_catalogue(path)
        assert str(error.value) == (
            f"{path}: GL0: 'relation' is a required property; allowed: le, approx, monotone"
        )


GL4_TEXT = """GL4:
  source: s
  text: t
  relation: le
  lhs: {op: neighbor_allgather}
  rhs: {op: neighbor_alltoall}
"""


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # the strict loader of campaign configs: a second GL4 would silently replace the first
        ((GL4_TEXT + GL4_TEXT).encode(), ":7: invalid YAML: key 'GL4' is given twice"),
        (GL4_TEXT.replace("source: s", "source: Lübbe").encode("latin-1"),
         ":2: not UTF-8 text (byte 0xfc at offset 16)"),
        (GL4_TEXT.replace("allgather}", "allgather").encode(),
         ":6: invalid YAML: expected ',' or '}', but got ':' (while parsing a flow mapping "
         "that starts at line 5)"),
    ],
)  # fmt: skip
def test_catalogue_files_are_read_strictly_naming_the_line(tmp_path, content, message):
    path = tmp_path / "guidelines.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as error:
        load_catalogue(path)
    assert str(error.value) == f"{path}{message}"


def test_a_missing_catalogue_is_named(tmp_path):
    with pytest.raises(ConfigError) as error:
        load_catalogue(tmp_path / "nope.yaml")
    assert str(error.value) == (
        f"{tmp_path / 'nope.yaml'}: cannot read the guideline catalogue: No such file or directory"
    )


def test_resolve_rejects_unknown_ids_and_duplicates():
    catalogue = load_catalogue(CATALOGUE)
    with pytest.raises(ConfigError, match=r"cfg.yaml: guidelines\[1\]: unknown guideline 'GL99'"):
        resolve(["GL4", "GL99"], catalogue, "cfg.yaml")
    with pytest.raises(ConfigError, match="GL4' selected twice"):
        resolve(["GL4", "GL4"], catalogue, "cfg.yaml")


@pytest.mark.parametrize(
    ("analysis", "key"),
    [({"p_thres": 2}, "p_thres"), ({"correction": "bonferroni"}, "correction"),
     ({"v_thres": 0.5}, "v_thres"), ({"confidence": 1}, "confidence"),
     ({"varied": "colour"}, "varied"), ({"alpha": 1}, "alpha")],
)  # fmt: skip
def test_bad_analysis_options_name_the_key(analysis, key):
    with pytest.raises(ConfigError, match=rf"cfg.yaml: analysis\.{key}"):
        AnalysisOptions.from_mapping(analysis, "cfg.yaml")


def test_two_mpi_entries_compared_by_selector():
    # null pairs (the self-test's identical entries): the same measurements under two mpi names
    # are never a violation
    rows = [experiment(i, "neighbor_alltoall", s) for i, s in enumerate(SIZES)]
    first = run_medians(rows, {}, 0.05, seed=1)
    second = run_medians(rows, {}, 0.05, seed=2).assign(mpi="copy")
    medians = pd.concat([first.assign(mpi="openmpi"), second], ignore_index=True)
    g = guideline(lhs={"mpi": "openmpi"}, rhs={"mpi": "copy"})
    tests = evaluate(medians, [g], AnalysisOptions.with_defaults(), "t")
    assert tests["mpi"].tolist() == ["openmpi|copy"] * len(SIZES)
    assert (tests["lhs_exp_id"] == tests["rhs_exp_id"]).all()
    assert not tests["violated"].any()


def test_tests_of_different_shapes_equal_scipy_per_test():
    # a run missing for one experiment puts its test into a (9, 10) shape of its own
    medians = allgather_vs_alltoall(1.1, noise=0.05)
    medians = medians.loc[~((medians["exp_id"] == 1) & (medians["run"] == 4))]
    tests = evaluate(
        medians, [guideline(**GL4_LIKE)], AnalysisOptions.with_defaults(test="ranksum"), "t"
    )
    assert sorted(zip(tests["n_lhs"], tests["n_rhs"], strict=True)) == [(9, 10), (10, 10), (10, 10)]
    for test in tests.itertuples():
        lhs = medians.loc[medians["exp_id"] == test.lhs_exp_id, "median_s"]
        rhs = medians.loc[medians["exp_id"] == test.rhs_exp_id, "median_s"]
        expected = scipy_stats.mannwhitneyu(lhs, rhs, alternative="greater").pvalue
        assert test.p_value == pytest.approx(expected, rel=1e-12)
        assert test.violation_ratio == pytest.approx(lhs.median() / rhs.median())


def test_page_faults_flag_the_tests_of_experiments_that_faulted():
    medians = allgather_vs_alltoall(1.0)
    for column in PAGE_FAULT_VALUES:
        medians[column] = 0
    # one run of the 1024-byte alltoall faulted on one rank; the others never did
    faulted = (medians["exp_id"] == 11) & (medians["run"] == 3)
    medians.loc[faulted, ["minor_faults_max", "minor_faults_sum"]] = 5
    tests = evaluate(medians, [guideline(**GL4_LIKE)], AnalysisOptions.with_defaults(), "t")
    assert dict(zip(tests["msg_size"], tests["page_faults"], strict=True)) == {
        "256": False, "1024": True, "4096": False,
    }  # fmt: skip
    # medians without counts (an older kernel): nothing is flagged
    plain = evaluate(allgather_vs_alltoall(1.0), [guideline(**GL4_LIKE)],
                     AnalysisOptions.with_defaults(), "t")  # fmt: skip
    assert not plain["page_faults"].any()


def blocked_entries(attempts: list[int] | None, seed: int = 3) -> pd.DataFrame:
    """Two entries whose runs share a launch factor run by run (blocks), the lhs 10 % slower;
    `attempts` per run gives both entries' block_attempt, except that run 0 of the lhs is
    re-measured (attempt 2) when the list says so with a 2 in place 0."""
    rng = np.random.default_rng(seed)
    rows = [experiment(i, "neighbor_alltoall", s) for i, s in enumerate(SIZES)]
    launch = np.exp(rng.normal(0, 0.3, RUNS))  # slow and fast launches, shared by a block
    frames = []
    for mpi, factor in (("slow", 1.1), ("fast", 1.0)):
        medians = run_medians(rows, {}, 0.01, seed=seed + len(mpi)).assign(mpi=mpi)
        medians["median_s"] *= factor * launch[medians["run"].to_numpy()]
        if attempts is not None:
            block_attempt = np.array(attempts)[medians["run"].to_numpy()]
            if mpi == "fast":
                block_attempt = np.where(block_attempt == 2, 1, block_attempt)
            medians["block_attempt"] = block_attempt
        frames.append(medians)
    return pd.concat(frames, ignore_index=True)


SLOW_VS_FAST = {"relation": "le", "lhs": {"mpi": "slow"}, "rhs": {"mpi": "fast"}}


def test_entries_measured_in_blocks_are_paired_block_by_block(capsys):
    medians = blocked_entries([1] * RUNS)
    tests = evaluate(medians, [guideline(**SLOW_VS_FAST)], AnalysisOptions.with_defaults(), "t")
    assert set(tests["test"]) == {"block_signed_rank"}
    # the shared launch factors cancel: the planted 10 % is found as in one launch
    assert tests["violation_ratio"].to_numpy() == pytest.approx(1.1, rel=0.02)
    assert tests["violated"].all()
    for test in tests.itertuples():
        lhs = medians.loc[(medians["mpi"] == "slow") & (medians["exp_id"] == test.lhs_exp_id)]
        rhs = medians.loc[(medians["mpi"] == "fast") & (medians["exp_id"] == test.rhs_exp_id)]
        log_ratios = np.log(lhs.sort_values("run")["median_s"].to_numpy()) - np.log(
            rhs.sort_values("run")["median_s"].to_numpy()
        )
        expected = scipy_stats.wilcoxon(log_ratios, alternative="greater").pvalue
        assert test.p_value == pytest.approx(expected, rel=1e-9)
        # the effect and its bounds: the one-sample Hodges-Lehmann estimate and the interval
        # that inverts the same signed-rank test: the lower bound one-sided at the violation
        # level 1 - p_thres (two-sided at 1 - 2 p_thres), the upper at confidence (2c - 1)
        violation, holds = paired_hodges_lehmann_ratios(
            log_ratios[None, :], 1 - 2 * 0.001, 2 * 0.95 - 1
        )
        assert (test.violation_ratio, test.ratio_low, test.ratio_high) == pytest.approx(
            (holds.ratio[0], violation.low[0], holds.high[0]), rel=1e-12
        )
        assert (test.low_level, test.high_level) == (1 - 0.001, 0.95)
    assert "left out" not in capsys.readouterr().err
    # without blocks the same entries are compared unpaired, and the launches swamp the 10 %
    unblocked = evaluate(
        medians.drop(columns="block_attempt"), [guideline(**SLOW_VS_FAST)],
        AnalysisOptions.with_defaults(), "t",
    )  # fmt: skip
    assert set(unblocked["test"]) == {"welch_t"}
    assert unblocked["p_value"].min() > tests["p_value"].max()


def test_a_signed_rank_test_with_too_few_blocks_says_how_many_it_needs():
    # 6 blocks: the signed-rank p-value cannot go below 2^-6, above p_thres 0.001 however
    # clear the 10 %; the test is undecided, could detect no ratio, and needs 10 blocks
    medians = first_runs(blocked_entries([1] * RUNS), 6)
    tests = evaluate(medians, [guideline(**SLOW_VS_FAST)], AnalysisOptions.with_defaults(), "t")
    assert set(tests["test"]) == {"block_signed_rank"}
    assert tests["p_value"].to_numpy() == pytest.approx(2.0**-6)
    assert set(tests["verdict"]) == {"undecided"}
    assert np.isinf(tests["detectable_ratio"]).all()
    assert (tests["runs_needed"] >= 10).all()


def test_a_launch_measured_again_is_not_paired_with_its_block(capsys):
    medians = blocked_entries([2] + [1] * (RUNS - 1))
    tests = evaluate(medians, [guideline(**SLOW_VS_FAST)], AnalysisOptions.with_defaults(), "t")
    assert set(tests["test"]) == {"block_signed_rank"}
    for test in tests.itertuples():
        lhs = medians.loc[(medians["mpi"] == "slow") & (medians["exp_id"] == test.lhs_exp_id)]
        rhs = medians.loc[(medians["mpi"] == "fast") & (medians["exp_id"] == test.rhs_exp_id)]
        kept = lambda side: side.sort_values("run")["median_s"].to_numpy()[1:]  # noqa: E731
        expected = scipy_stats.wilcoxon(
            np.log(kept(lhs)) - np.log(kept(rhs)), alternative="greater"
        ).pvalue
        assert test.p_value == pytest.approx(expected, rel=1e-9)
    assert f"{len(SIZES)} pair(s) of runs left out" in capsys.readouterr().err


def test_too_few_pairs_from_one_attempt_fall_back_to_welch(capsys):
    attempts = [1, 1] + [0] * (RUNS - 2)  # only two blocks; one of them re-measured
    attempts[0] = 2
    medians = blocked_entries(attempts)
    tests = evaluate(medians, [guideline(**SLOW_VS_FAST)], AnalysisOptions.with_defaults(), "t")
    assert set(tests["test"]) == {"welch_t"}
    assert f"{2 * len(SIZES)} pair(s) of runs left out" in capsys.readouterr().err


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_a_corrected_rank_test_shows_its_bound_at_its_own_level(correction):
    """Under a correction each rank test's lower bound is the Hodges-Lehmann bound at the level
    its p-value is held to (p_thres x p_value / p_adjusted), and is above 1 exactly where the
    test is violated."""
    # a slowdown the runs show unevenly: p-values apart, so that each correction moves them
    medians = allgather_vs_alltoall(1.08, noise=0.06)
    options = AnalysisOptions.with_defaults(test="ranksum", correction=correction, p_thres=0.05)
    tests = evaluate(medians, [guideline(**GL4_LIKE)], options, "t")
    assert (tests["test"] == "ranksum").all()
    tails = 0.05 * tests["p_value"] / tests["p_adjusted"]
    assert (tails < 0.05).any()
    assert tests["low_level"].to_numpy() == pytest.approx(1 - tails.to_numpy())
    for test, tail in zip(tests.itertuples(), tails, strict=True):
        lhs = medians.loc[medians["exp_id"] == test.lhs_exp_id, "median_s"].to_numpy()
        rhs = medians.loc[medians["exp_id"] == test.rhs_exp_id, "median_s"].to_numpy()
        (bound,) = hodges_lehmann_ratios(lhs[None, :], rhs[None, :], 1 - 2 * tail)
        assert test.ratio_low == pytest.approx(min(bound.low[0], test.violation_ratio))
        assert test.violated == (test.ratio_low > 1 and test.violation_ratio >= 1.03)


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_a_corrected_block_signed_rank_test_shows_its_bound_at_its_own_level(correction):
    """As for the rank-sum: under a correction a block-paired test's lower bound is the
    one-sample Hodges-Lehmann bound, on the runs it kept, at the level its p-value is held to."""
    medians = blocked_entries([2] + [1] * (RUNS - 1))
    # noise of each launch's own, so that the p-values and bounds differ from test to test
    rng = np.random.default_rng(4)
    medians["median_s"] *= np.exp(rng.normal(0, 0.08, len(medians)))
    options = AnalysisOptions.with_defaults(correction=correction, p_thres=0.05)
    tests = evaluate(medians, [guideline(**SLOW_VS_FAST)], options, "t")
    assert set(tests["test"]) == {"block_signed_rank"}
    tails = 0.05 * tests["p_value"] / tests["p_adjusted"]
    assert (tails < 0.05).any()
    for test, tail in zip(tests.itertuples(), tails, strict=True):
        lhs = medians.loc[(medians["mpi"] == "slow") & (medians["exp_id"] == test.lhs_exp_id)]
        rhs = medians.loc[(medians["mpi"] == "fast") & (medians["exp_id"] == test.rhs_exp_id)]
        kept = lambda side: side.sort_values("run")["median_s"].to_numpy()[1:]  # noqa: E731
        log_ratios = np.log(kept(lhs)) - np.log(kept(rhs))
        (bound,) = paired_hodges_lehmann_ratios(log_ratios[None, :], 1 - 2 * tail)
        assert test.ratio_low == pytest.approx(min(bound.low[0], test.violation_ratio))
        assert test.low_level == pytest.approx(1 - tail)
