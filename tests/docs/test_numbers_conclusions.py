"""The conclusions `docs/benchmarks.md` states in words are true of the records.

The page fills its numbers and most of its comparison words from the records (value markers);
the sentences below make a claim no marker generates (a ranking, "most of the gap", "within the
seed-to-seed spread", a missed target), so each is checked here against `benchmarks/results/`.
A record that changes a conclusion fails the test that quotes the sentence: update the prose.
"""

import re

import numpy as np
import pytest

from benchmarks.accuracy.rows import MODEL_ABLATIONS
from tests.support.docs_site import load_hooks

hooks = load_hooks()
from record_values import compare_word, paired_differences  # noqa: E402  (docs/, on the path the hooks put it)

ROWS = hooks.read_records(hooks.ACCURACY)


def mean(row, metric):
    return float(np.mean([r["metrics"][metric] for r in ROWS[row]]))


def seed(row, metric, number):
    return next(r["metrics"][metric] for r in ROWS[row] if r["seed"] == number)


def difference(row, metric):
    return next(e for e in hooks.differences_from_baseline(ROWS) if e["row"] == row)[metric]


def page_says(sentence):
    with open(f"{hooks.ROOT}/docs/benchmarks.md") as f:
        text = " ".join(f.read().split())
    assert sentence in text, f"docs/benchmarks.md no longer says {sentence!r}: update this test"


# The budget backbone's baselines (the keras-hub rows, `<row>-hub_*`, train other backbones).
SCRATCH_BASELINES = [
    r for r in ROWS if r.startswith("baseline/") and "@" not in r and "-hub_" not in r
]


@pytest.mark.parametrize("metric", ["recall@1", "map@r"])
def test_proxy_nca_is_the_best_baseline_loss(metric):
    page_says("is the best baseline loss")
    assert max(SCRATCH_BASELINES, key=lambda r: mean(r, metric)) == "baseline/proxy_nca"


def test_class_based_losses_lead_and_the_papers_pair_losses_trail_by_recall():
    page_says("by R@1 the class-based losses (Proxy-NCA, ArcFace, CosFace) lead")
    ranked = sorted(SCRATCH_BASELINES, key=lambda r: -mean(r, "recall@1"))
    assert set(ranked[:3]) == {"baseline/proxy_nca", "baseline/arcface", "baseline/cosface"}
    assert {"baseline/margin", "baseline/binomial_deviance"} <= set(ranked[-3:])


@pytest.mark.parametrize(
    "best, regime", [("mheads/proxy_nca", "scratch"), ("mheads/best@pretrained", "pretrained")]
)
@pytest.mark.parametrize("metric", ["recall@1", "map@r"])
def test_m_heads_are_the_best_row_of_each_regime(best, regime, metric):
    page_says("the best row trained from scratch")
    page_says("(the best pretrained row)")
    rows = [r for r in ROWS if ("@pretrained" in r) == (regime == "pretrained")]
    assert max(rows, key=lambda r: mean(r, metric)) == best


@pytest.mark.parametrize("row", ["dc/best", "hdc/best"])
def test_d_and_c_and_hierarchical_d_and_c_trail_the_baseline_from_scratch(row):
    page_says("Why D&C loses here")
    page_says("Hierarchical D&C trailed for a setting, not its method")
    for number in (0, 1):
        baseline = seed("baseline/normalized_softmax", "map@r", number)
        assert seed(row, "map@r", number) < baseline


@pytest.mark.parametrize("metric", ["recall@1", "map@r"])
def test_the_conquer_stage_recovers_most_of_the_gap(metric):
    """On seed 0, the seed `dc/best-without-conquer` has."""
    page_says("recovers most of the gap")
    baseline = seed("baseline/normalized_softmax", metric, 0)
    without = baseline - seed("dc/best-without-conquer", metric, 0)
    with_conquer = baseline - seed("dc/best", metric, 0)
    assert 0 < with_conquer < without / 2


def test_pretrained_rows_have_seed_0_and_differ_by_less_than_the_scratch_seed_spread():
    page_says("Every pretrained row has seed 0 only")
    page_says("these MAP@R differences are within the seed-to-seed spread of the scratch rows")
    pretrained = [r for r in ROWS if r.endswith("@pretrained")]
    assert len(pretrained) >= 5
    assert all([r["seed"] for r in ROWS[row]] == [0] for row in pretrained)
    spread = abs(
        seed("baseline/normalized_softmax", "map@r", 0)
        - seed("baseline/normalized_softmax", "map@r", 1)
    )
    compared = [e for e in hooks.differences_from_baseline(ROWS) if e["row"] in pretrained]
    assert compared and all(abs(e["map@r"]) < spread for e in compared if e["baseline"])


@pytest.mark.parametrize("row", ["dc/best", "hdc/best"])
@pytest.mark.parametrize("metric", ["recall@1", "map@r"])
def test_d_and_c_pretrained_is_closer_to_its_baseline_than_from_scratch(row, metric):
    page_says("There D&C is close to the baseline")
    assert abs(difference(f"{row}@pretrained", metric)) < abs(difference(row, metric))


def speed_rows(script):
    return [row for name, rows, _ in hooks.speed_sources() if name == script for row in rows]


def test_a_bier_misses_the_step_time_target():
    page_says("A-BIER misses the step-time target")
    (row,) = speed_rows("methods.bier")
    bier, a_bier = (float(x) for x in re.findall(r"([\d.]+)x", row["result"]))
    assert a_bier > 1.10 >= bier


def test_the_exact_search_stays_within_1_5_times_its_bound_at_every_size():
    page_says("at every one of these sizes it stays within 1.5 times the bare matrix product")
    ratios = {}
    for row in speed_rows("speed.evaluation_scale"):
        found = re.search(r"= ([\d.]+)x the compute bound", row["result"])
        size = re.search(r"([\d,]+) x 128", row["what"])
        if found and size:
            ratios[int(size.group(1).replace(",", ""))] = float(found.group(1))
    assert sorted(ratios) == [50_000, 100_000, 200_000, 500_000, 1_000_000]
    assert all(ratio <= 1.5 for ratio in ratios.values()), ratios


def test_ivf_recall_is_low_on_random_data():
    page_says("IVF's low neighbour recall is its defaults")
    recalls = [
        float(re.search(r"neighbour recall ([\d.]+)", row["result"]).group(1))  # IVF's comes first
        for row in speed_rows("speed.evaluation_scale")
        if "ivf" in row["what"].lower()
    ]
    assert recalls and all(recall < 0.5 for recall in recalls)


# The reality check's records: both files, the second replacing the first's row and seed.
REALITY_PATHS = [hooks.ACCURACY, hooks.REALITY_CHECK]
REALITY = hooks.reality_check_table.latest_per_seed(REALITY_PATHS)


def test_keras_dml_trails_pml_on_map_at_r_with_fast_ap_only():
    page_says("keras-dml trails PML with one loss whose definitions agree, FastAP")
    trailing, table = set(), hooks.reality_check_table
    for loss in table.PML_RECIPES:
        pml = f"pml/{loss}"
        if loss in table.PML_DIFFERENT_DEFINITIONS or pml not in REALITY:
            continue
        if compare_word(REALITY, f"baseline/{loss}", pml, "map@r") == "behind":
            trailing.add(loss)
    assert trailing == {"fast_ap"}


def test_every_memory_comparison_is_on_one_runtime_per_seed():
    page_says("Each of these comparisons is on one runtime per seed")
    entries = [e for e in hooks.reality_check_table.loss_rows(REALITY) if e["xbm_seeds"]]
    assert len(entries) >= 11 and not any(e["xbm_mixed_runtimes"] for e in entries)


def test_one_runtime_pair_stands_apart_and_the_rest_move_less_than_the_seeds():
    page_says("One pair stands apart: binomial deviance with memory, seed 1")
    page_says("the runtime moved a row's MAP@R less than the same rows' two seeds differ")
    module = hooks.runtime_pairs
    pairs = module.runtime_pairs(REALITY, hooks.read_records(hooks.RUNTIME_PAIRS))
    largest = max(pairs, key=lambda p: abs(p["map@r"]["difference"]))
    assert (largest["row"], largest["seed"]) == ("baseline/binomial_deviance+xbm", 1)
    assert largest["map@r"]["difference"] < 0  # lower on JAX / the H200
    assert largest["runtimes"] == ("tensorflow, cpu", "jax, NVIDIA H200")
    rest = [p for p in pairs if p is not largest]
    _, seeds, _, rows = module.summary(REALITY, pairs, "map@r")
    assert seeds is not None and len(rest) >= 9
    assert np.mean([abs(p["map@r"]["difference"]) for p in rest]) < seeds


def test_re_ranking_the_best_row_raises_map_at_r_lowers_recall_and_dba_raises_it_most():
    page_says("raises its MAP@R with every method and lowers its R@1 a little")
    page_says("database-side augmentation (`dba`) raises MAP@R the most")
    best, seeds, results = hooks.reality_check_table.rerank_rows(REALITY)
    assert best == "baseline/proxy_nca" and seeds == [0, 1]
    plain, reranked = results[0][1], dict(results[1:])
    for means in reranked.values():
        assert means["map@r"] > plain["map@r"]
        assert plain["recall@1"] - 0.02 < means["recall@1"] < plain["recall@1"]
    assert max(reranked, key=lambda name: reranked[name]["map@r"]) == "dba"


def test_the_reduction_accounts_for_part_of_pml_abe_contrastive_gap_not_all():
    page_says("so the reduction accounts for part of PML's gap, not all of it")
    separate, joint = "baseline/abe_contrastive-separate", "baseline/abe_contrastive"
    for number in (0, 1):
        values = {
            row: next(r for r in REALITY[row] if r["seed"] == number)["metrics"]["map@r"]
            for row in (separate, joint, "pml/abe_contrastive")
        }
        assert values["pml/abe_contrastive"] < values[separate] < values[joint], number


PRETRAINED = f"{hooks.ROOT}/benchmarks/results/accuracy_hangul_pretrained.jsonl"
PRETRAINED_ROWS = hooks.read_records(PRETRAINED)


def test_the_conquer_stage_recovers_part_of_the_gap_dividing_opens_when_fine_tuning():
    page_says("recovers part of the gap that dividing opens")
    divided = PRETRAINED_ROWS["dc/best-without-conquer@pretrained"]
    merged = PRETRAINED_ROWS["dc/best@pretrained"]
    baseline = PRETRAINED_ROWS["baseline/normalized_softmax@pretrained"]
    to_merged = paired_differences(divided, merged, "map@r")
    to_baseline = paired_differences(merged, baseline, "map@r")
    # Divided to the end trails the merged D&C, which still trails the baseline, on every seed.
    assert to_merged and all(d < 0 for d in to_merged)
    assert to_baseline and all(d < 0 for d in to_baseline)


def test_hierarchical_d_and_c_trails_because_its_backbone_is_frozen_after_each_division():
    page_says("it gains on its frozen row on every recorded seed")
    frozen = PRETRAINED_ROWS["hdc/best@pretrained"]
    unfrozen = PRETRAINED_ROWS["hdc/best-unfrozen@pretrained"]
    baseline = PRETRAINED_ROWS["baseline/normalized_softmax@pretrained"]
    # Frozen, it trails the baseline on every seed; unfrozen, it gains on every seed it has.
    assert all(d < 0 for d in paired_differences(frozen, baseline, "map@r"))
    gains = paired_differences(unfrozen, frozen, "map@r")
    assert gains and all(d > 0 for d in gains)


@pytest.mark.parametrize(
    "sentence, row",
    [
        ("fewer compositors do not close its gap either", "dcml/best-4-compositors@pretrained"),
        ("D&C is still", "dc/best-2-learners@pretrained"),
        ("Nor is re-clustering", "dc/best-fixed-clusters@pretrained"),
        ("with half the compositors it trails the baseline", "dcml/best-4-compositors@pretrained"),
    ],
)
def test_an_ablation_that_does_not_close_the_gap_still_trails_the_baseline(sentence, row):
    page_says(sentence)
    baseline = PRETRAINED_ROWS["baseline/normalized_softmax@pretrained"]
    gaps = paired_differences(PRETRAINED_ROWS[row], baseline, "map@r")
    assert gaps and all(d < 0 for d in gaps)


def test_the_papers_fine_tuning_lifts_d_and_c_and_the_baseline_alike():
    page_says("The papers' fine-tuning lifts D&C and the baseline alike")
    slowed = {
        row: PRETRAINED_ROWS[f"{row}-backbone-lr0.1@pretrained"]
        for row in ("dc/best", "baseline/normalized_softmax")
    }
    for row, records in slowed.items():
        gains = paired_differences(records, PRETRAINED_ROWS[f"{row}@pretrained"], "map@r")
        assert gains and all(d > 0 for d in gains), row
    gaps = paired_differences(slowed["dc/best"], slowed["baseline/normalized_softmax"], "map@r")
    assert gaps and all(d < 0 for d in gaps)


def test_d_and_c_written_apart_from_keras_dml_trails_its_baseline_by_more():
    page_says("by more than keras-dml's D&C trails keras-dml's")
    page_says("trails its own baseline too, by more, on each of three seeds")

    def gaps_by_seed(row, baseline):
        mine = {r["seed"]: r["metrics"]["map@r"] for r in PRETRAINED_ROWS[row]}
        theirs = {r["seed"]: r["metrics"]["map@r"] for r in PRETRAINED_ROWS[baseline]}
        return {seed: mine[seed] - theirs[seed] for seed in mine.keys() & theirs.keys()}

    torch_gaps = gaps_by_seed(
        "pml/dc-normalized_softmax@pretrained", "pml/normalized_softmax@pretrained"
    )
    keras_gaps = gaps_by_seed("dc/best@pretrained", "baseline/normalized_softmax@pretrained")
    assert len(torch_gaps) >= 3 and all(gap < 0 for gap in torch_gaps.values())
    assert all(gap < keras_gaps[seed] for seed, gap in torch_gaps.items())


START = [
    f"{hooks.ROOT}/benchmarks/results/reality_check_hangul.jsonl",
    f"{hooks.ROOT}/benchmarks/results/reality_check_start_hangul.jsonl",
]


def seed_0_map_at_r(records, row):
    (record,) = [r for r in records[row] if r["seed"] == 0]
    return record["metrics"]["map@r"]


def test_fast_aps_gap_is_pmls_start_and_circles_is_not():
    page_says("FastAP's gap is PML's start: with Keras's epsilon alone")
    page_says("Circle's gap is not the start")
    rows = hooks.reality_check_table.latest_per_seed(START)
    keras_dml = seed_0_map_at_r(rows, "baseline/fast_ap")
    pml = seed_0_map_at_r(rows, "pml/fast_ap")
    assert pml - keras_dml > 0.01  # the gap this explains
    assert abs(seed_0_map_at_r(rows, "pml/fast_ap-keras-epsilon") - keras_dml) < 0.01
    assert seed_0_map_at_r(rows, "pml/fast_ap-keras-start") < keras_dml
    assert abs(seed_0_map_at_r(rows, "baseline/fast_ap-pytorch-epsilon") - keras_dml) < 0.01
    circle_moved = seed_0_map_at_r(rows, "pml/circle-keras-start") - seed_0_map_at_r(
        rows, "pml/circle"
    )
    assert abs(circle_moved) < 0.01


def test_twice_the_epochs_does_not_narrow_d_and_cs_gap():
    page_says("it does not narrow")
    six = hooks.read_records(
        f"{hooks.ROOT}/benchmarks/results/accuracy_hangul_pretrained_6_epochs.jsonl"
    )
    assert all(r["budget"]["epochs"] == 6 for rows in six.values() for r in rows)
    baseline = "baseline/normalized_softmax@pretrained"
    longer = paired_differences(six["dc/best@pretrained"], six[baseline], "map@r")
    shorter = paired_differences(
        PRETRAINED_ROWS["dc/best@pretrained"], PRETRAINED_ROWS[baseline], "map@r"
    )
    gains = paired_differences(six[baseline], PRETRAINED_ROWS[baseline], "map@r")
    assert longer and all(d < 0 for d in longer)
    assert max(longer) <= max(shorter)  # as wide as the narrowest gap at three epochs, or wider
    assert gains and all(d > 0 for d in gains)  # the longer fine-tune does train more


def test_circles_gap_was_the_seeds():
    page_says("Behind by little on the first three seeds, keras-dml is ahead on a later one")
    page_says("The mean of these differences is smaller than their own standard deviation")
    keras_dml, pml = REALITY["baseline/circle"], REALITY["pml/circle"]
    gaps = paired_differences(keras_dml, pml, "map@r")
    assert len(gaps) >= 4 and all(-0.02 < d < 0 for d in gaps[:3]) and max(gaps[3:]) > 0
    shared = {r["seed"] for r in keras_dml}
    pml_values = [r["metrics"]["map@r"] for r in pml if r["seed"] in shared]
    assert abs(np.mean(gaps)) < np.std(gaps, ddof=1)
    assert abs(np.mean(gaps)) < np.std(pml_values, ddof=1)
    assert compare_word(REALITY, "baseline/circle", "pml/circle", "map@r") == "level with"


def test_abe_without_its_divergence_loss_is_where_it_was_and_behind_m_heads():
    page_says("Without its divergence loss ABE is where it was (within 0.01)")
    plain = PRETRAINED_ROWS["abe/best-no-divergence@pretrained"]
    moved = paired_differences(plain, PRETRAINED_ROWS["abe/best@pretrained"], "map@r")
    to_m_heads = paired_differences(plain, PRETRAINED_ROWS["mheads/best@pretrained"], "map@r")
    assert moved and all(abs(d) < 0.01 for d in moved)
    assert to_m_heads and all(d < 0 for d in to_m_heads)


KANJI_PRETRAINED = hooks.read_records(
    f"{hooks.ROOT}/benchmarks/results/accuracy_kanji_pretrained.jsonl"
)


BASELINE = "baseline/normalized_softmax@pretrained"


def three_seed_gaps(records, other):
    """MAP@R of `records` minus `other`, seed by seed; fails unless they share three seeds."""
    gaps = paired_differences(records, other, "map@r")
    assert len(gaps) >= 3, f"{len(gaps)} shared seeds; the sentence speaks of three"
    return gaps


def word_on_three_seeds(rows, row, other):
    """The page's comparison word for `row` against `other` (`compare_word`: ahead or behind on
    every seed, else level), once they share three seeds."""
    three_seed_gaps(rows[row], rows[other])
    return compare_word(rows, row, other, "map@r")


def test_d_and_c_trails_the_baseline_on_kanji_too_and_unfrozen_hierarchical_d_and_c_does_not():
    page_says("On kanji too, D&C trails the baseline fine-tuned from the same weights on every")
    page_says("on every seed, as on `hangul`: the measured reason above holds")
    page_says("is ahead of D&C on every seed there too, as on `hangul`, and within 0.01 of the")
    page_says("that recipe holds on three seeds of both datasets")
    for rows in (KANJI_PRETRAINED, PRETRAINED_ROWS):
        assert word_on_three_seeds(rows, "dc/best@pretrained", BASELINE) == "behind"
        assert word_on_three_seeds(rows, "hdc/best-unfrozen@pretrained", "dc/best@pretrained") == (
            "ahead of"
        )
    unfrozen = KANJI_PRETRAINED["hdc/best-unfrozen@pretrained"]
    assert all(abs(d) < 0.01 for d in three_seed_gaps(unfrozen, KANJI_PRETRAINED[BASELINE]))


def test_dcml_loses_to_the_baseline_on_kanji_by_its_composites_losses():
    page_says("its composites' losses are what it loses by: without them it is ahead of DCML")
    page_says("On neither dataset does DCML's compositional objective give anything at this")
    plain = "dcml/best-no-subtasks@pretrained"
    assert word_on_three_seeds(KANJI_PRETRAINED, "dcml/best@pretrained", BASELINE) == "behind"
    assert word_on_three_seeds(KANJI_PRETRAINED, plain, "dcml/best@pretrained") == "ahead of"
    assert word_on_three_seeds(KANJI_PRETRAINED, plain, BASELINE) == "level with"


def test_dcml_without_its_composites_losses_is_where_it_was_and_level_with_the_baseline():
    page_says("DCML's composites' losses neither help nor hurt it here")
    page_says("without its composites' losses (three seeds) it is where it was, level with the")
    plain = "dcml/best-no-subtasks@pretrained"
    assert word_on_three_seeds(PRETRAINED_ROWS, "dcml/best@pretrained", plain) == "level with"
    assert word_on_three_seeds(PRETRAINED_ROWS, plain, BASELINE) == "level with"


def test_abe_trails_m_heads_split_where_its_shared_layers_end():
    page_says("ABE trails M-heads at the paper's comparison too")
    page_says("at the paper's comparison too (M-heads sharing ABE's bottom layers, three seeds)")
    same_cut = "mheads/best-block2@pretrained"
    assert word_on_three_seeds(PRETRAINED_ROWS, "abe/best@pretrained", same_cut) == "behind"
    assert word_on_three_seeds(PRETRAINED_ROWS, same_cut, "mheads/best@pretrained") == "level with"


def test_m_heads_split_where_abes_shared_layers_end_has_more_parameters_than_abe():
    page_says("Those copies are also why M-heads has more parameters than ABE")
    import keras_dml

    def built(model_class, **options):
        backbone = keras_dml.backbones.get("vgg_small", input_shape=(32, 32, 3))
        model = model_class(backbone, num_learners=4, embedding_dim=128, **options)
        model(np.zeros((1, 32, 32, 3), "float32"))
        return model

    abe = built(keras_dml.models.ABE)
    m_heads = built(keras_dml.models.MHeads, **MODEL_ABLATIONS["mheads/best-block2"]["model"])
    assert abe.branch_point == m_heads.branch_point  # the rows' shared `S` is the same
    assert abe.count_params() < m_heads.count_params()
