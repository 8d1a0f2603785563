"""The latent-defect catalogue of the benchmark generator (SPEC §3).

Usage::

    from rewardkit.bioaudit.defects import MUTATIONS, SILENT, apply
    m = MUTATIONS["scrna.doublet.skipped"]
    new, flagged_id = apply(m, trajectory)     # None when the trajectory offers no target

Each shipped rule has one *mutation*: an edit of a correct trajectory that the rule (and only
the rule) should flag — a changed parameter, a replaced action, or a removed earlier step. It is
written here independently of the TOML conditions, so it serves twice: as the positive example
of every rule in the tests, and as a *visible* defect (``kind="defect"``) or a *borderline*
choice (``kind="borderline"``: questionable, not wrong) in the generated benchmark.

*Silent* defects (swapped sample labels, contamination, an undocumented filter, …) leave the
decision record unchanged; no rule can see them, only the outcome (gold) does.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["MUTATIONS", "SILENT", "Mutation", "apply"]


@dataclass(frozen=True)
class Mutation:
    """Edit the last decision with action ``target``; ``remove`` deletes an earlier step."""

    rule_id: str
    target: str
    kind: Literal["defect", "borderline"]
    set: dict[str, Any] = field(default_factory=dict)  # "params.x" / "context.x" -> value
    drop: tuple[str, ...] = ()  # "params.x" keys to delete
    action: str | None = None  # replace the action (params are then replaced by ``set`` only)
    remove: str | None = None  # an earlier action to delete from the trajectory


def _m(rule_id: str, target: str, kind: str = "defect", **kw: Any) -> Mutation:
    return Mutation(rule_id, target, kind, **kw)  # type: ignore[arg-type]


_ALL = [
    # scrna
    _m("scrna.qc.no_mito_filter", "qc_filter", drop=("params.max_pct_mito",)),
    _m("scrna.qc.mito_threshold_loose", "qc_filter", "borderline", set={"params.max_pct_mito": 50}),
    _m("scrna.qc.no_gene_filter", "qc_filter", set={"params.min_genes": 0}),
    _m("scrna.qc.skipped", "hvg_selection", remove="qc_filter"),
    _m("scrna.doublet.skipped", "doublet_detection", action="no_doublet_detection"),
    _m(
        "scrna.doublet.rate_unset",
        "doublet_detection",
        "borderline",
        drop=("params.expected_rate",),
    ),
    _m("scrna.norm.none", "normalization", set={"params.method": "none"}),
    _m(
        "scrna.norm.no_log",
        "normalization",
        set={"params.method": "total_count", "params.log_transform": False},
    ),
    _m("scrna.norm.skipped", "dimensionality_reduction", remove="normalization"),
    _m("scrna.hvg.too_few", "hvg_selection", "borderline", set={"params.n_top_genes": 300}),
    _m("scrna.batch.uncorrected", "neighbors", remove="batch_correction"),
    _m(
        "scrna.batch.single_batch_corrected",
        "batch_correction",
        "borderline",
        set={"context.n_batches": 1},
    ),
    _m(
        "scrna.pca.too_few_components",
        "dimensionality_reduction",
        "borderline",
        set={"params.n_comps": 5},
    ),
    _m("scrna.cluster.no_graph", "clustering", remove="neighbors"),
    _m(
        "scrna.cluster.resolution_extreme",
        "clustering",
        "borderline",
        set={"params.resolution": 5.0},
    ),
    _m(
        "scrna.annotation.no_clusters",
        "cell_type_annotation",
        set={"params.method": "marker_genes"},
        remove="clustering",
    ),
    _m(
        "scrna.de.pseudoreplication",
        "de_test",
        set={"params.unit": "cell", "params.method": "wilcoxon"},
    ),
    _m("scrna.de.corrected_values", "de_test", set={"params.input": "batch_corrected"}),
    _m("scrna.de.too_few_samples", "de_test", set={"context.n_samples_per_group": 1}),
    _m("scrna.fdr.none", "multiple_testing_correction", set={"params.method": "none"}),
    _m("scrna.neighbors.too_few", "neighbors", "borderline", set={"params.n_neighbors": 3}),
    _m(
        "scrna.annotation.unreviewed",
        "cell_type_annotation",
        "borderline",
        set={"params.method": "celltypist", "params.reviewed": False},
    ),
    _m("scrna.viz.umap_distances", "visualization", set={"params.used_for": "distance_inference"}),
    # deg
    _m("deg.replicates.none", "de_test", set={"context.n_replicates_per_group": 1}),
    _m("deg.replicates.low", "de_test", "borderline", set={"context.n_replicates_per_group": 2}),
    _m("deg.test.wrong_for_counts", "de_test", set={"params.method": "t_test"}),
    _m(
        "deg.test.normalized_input",
        "de_test",
        set={"params.method": "DESeq2_wald", "params.input": "normalized"},
    ),
    _m("deg.design.missing", "de_test", remove="design_matrix"),
    _m("deg.qc.skipped", "de_test", remove="sample_qc"),
    _m("deg.fdr.none", "multiple_testing_correction", set={"params.method": "none"}),
    _m(
        "deg.fdr.alpha_loose",
        "multiple_testing_correction",
        "borderline",
        set={"params.alpha": 0.25},
    ),
    _m("deg.filter.raw_pvalue", "result_filtering", set={"params.use": "pvalue"}),
    _m(
        "deg.lfc.post_hoc_cutoff",
        "result_filtering",
        "borderline",
        set={"params.lfc_threshold_mode": "post_hoc"},
    ),
    _m(
        "deg.design.batch_ignored",
        "design_matrix",
        set={"context.n_batches": 3, "params.includes_batch": False},
    ),
    _m(
        "deg.design.pairing_ignored",
        "design_matrix",
        set={"context.paired": True, "params.includes_subject": False},
    ),
    _m("deg.design.confounded", "design_matrix", set={"context.batch_confounded": True}),
    _m("deg.norm.within_sample_units", "normalization", set={"params.method": "FPKM"}),
    _m("deg.norm.skipped", "dispersion_estimation", remove="normalization"),
    _m("deg.filter.none", "filter_low_counts", "borderline", set={"params.min_count": 0}),
    _m(
        "deg.enrichment.genome_background",
        "enrichment_analysis",
        set={"params.method": "ORA", "params.background": "genome"},
    ),
    _m(
        "deg.enrichment.unshrunk_ranking",
        "enrichment_analysis",
        "borderline",
        set={"params.method": "GSEA", "params.ranking": "unshrunken_lfc"},
    ),
    _m(
        "deg.shrinkage.normal_prior", "lfc_shrinkage", "borderline", set={"params.method": "normal"}
    ),
    _m("deg.dispersion.fixed_guess", "dispersion_estimation", set={"params.method": "fixed_bcv"}),
    _m("deg.outlier.undocumented", "outlier_removal", set={"context.documented_reason": False}),
    # pan
    _m("pan.cohort.single", "cohort_selection", set={"context.n_cohorts": 1}),
    _m("pan.qc.no_purity", "sample_qc", "borderline", set={"params.purity_filter": False}),
    _m("pan.qc.duplicates_kept", "sample_qc", set={"params.deduplicate_patients": False}),
    _m("pan.norm.none", "normalization", set={"params.method": "none"}),
    _m(
        "pan.norm.platforms_mixed",
        "normalization",
        set={"context.mixed_platforms": True, "params.cross_platform": False},
    ),
    _m(
        "pan.batch.removes_biology",
        "batch_correction",
        set={"params.batch_variable": "cancer_type"},
    ),
    _m("pan.batch.uncorrected", "clustering", remove="batch_correction"),
    _m("pan.cluster.k_fixed", "clustering", "borderline", set={"params.k_selection": "fixed"}),
    _m("pan.features.outcome_selected", "feature_selection", set={"params.uses_outcome": True}),
    _m(
        "pan.survival.os_indolent",
        "survival_endpoint",
        "borderline",
        set={"params.endpoint": "OS", "context.indolent_types": True},
    ),
    _m("pan.survival.unstratified", "survival_model", set={"params.stratify_by": "none"}),
    _m("pan.survival.low_epv", "survival_model", set={"context.events_per_variable": 6}),
    _m(
        "pan.survival.optimal_cutpoint",
        "survival_model",
        set={"params.predictor_cut": "optimal_cutpoint"},
    ),
    _m("pan.survival.ph_unchecked", "report_hazard_ratios", remove="ph_assumption_check"),
    _m(
        "pan.survival.ph_violation_ignored",
        "report_hazard_ratios",
        set={
            "earlier.ph_assumption_check.params.result": "violated",
            "earlier.ph_assumption_check.params.remedy": "none",
        },
    ),
    _m(
        "pan.association.cancer_type_unadjusted",
        "association_test",
        set={"params.adjust_for_cancer_type": False},
    ),
    _m("pan.fdr.none", "multiple_testing_correction", set={"params.method": "none"}),
    _m(
        "pan.fdr.alpha_loose",
        "multiple_testing_correction",
        "borderline",
        set={"params.alpha": 0.25},
    ),
    _m("pan.qc.purity_threshold_low", "sample_qc", "borderline", set={"params.min_purity": 0.1}),
    _m(
        "pan.survival.median_split",
        "survival_model",
        "borderline",
        set={"params.predictor_cut": "median"},
    ),
    _m("pan.validation.resubstitution", "validation", set={"params.method": "resubstitution"}),
]
MUTATIONS: dict[str, Mutation] = {m.rule_id: m for m in _ALL}

# Defects no decision record shows; gold sees them in the outcome. Per paradigm.
SILENT: dict[str, tuple[str, ...]] = {
    "deg": (
        "sample_label_swap",
        "rrna_contamination",
        "undocumented_gene_filter",
        "wrong_strandedness",
    ),
    "pan": (
        "patient_id_mismatch",
        "clinical_data_misalignment",
        "undocumented_sample_exclusion",
        "censoring_miscoded",
    ),
    "scrna": (
        "sample_label_swap",
        "ambient_contamination",
        "undocumented_cell_filter",
        "wrong_genome_build",
    ),
}


def _set(decision: dict[str, Any], key: str, value: Any) -> None:
    section, name = key.split(".", 1)
    decision.setdefault(section, {})[name] = value


def apply(
    m: Mutation, trajectory: list[dict[str, Any]], *, used: frozenset[str] = frozenset()
) -> tuple[list[dict[str, Any]], str, frozenset[str]] | None:
    """Apply ``m`` to a copy of ``trajectory``: the new trajectory, the flagged decision's id
    and the ids of every decision it touched (flagged, edited earlier, removed).

    ``None`` when the trajectory has no target (or its target / removed step / edited earlier
    step is in ``used``, the ids other mutations already touched).
    """
    new = copy.deepcopy(trajectory)
    idx = [i for i, d in enumerate(new) if d["action"] == m.target]
    if not idx or new[idx[-1]]["decision_id"] in used:
        return None
    t = idx[-1]
    target = new[t]
    touched = {target["decision_id"]}
    for key, value in m.set.items():
        if key.startswith("earlier."):
            _, action, rest = key.split(".", 2)
            prior = [d for d in new[:t] if d["action"] == action]
            if not prior or prior[-1]["decision_id"] in used:
                return None
            _set(prior[-1], rest, value)
            touched.add(prior[-1]["decision_id"])
    if m.action is not None:
        target["action"] = m.action
        target["params"] = {}
    for key, value in m.set.items():
        if not key.startswith("earlier."):
            _set(target, key, value)
    for key in m.drop:
        section, name = key.split(".", 1)
        target.get(section, {}).pop(name, None)
    if m.remove is not None:
        where = [i for i, d in enumerate(new[:t]) if d["action"] == m.remove]
        if not where or new[where[-1]]["decision_id"] in used:
            return None
        touched.add(new[where[-1]]["decision_id"])
        del new[where[-1]]
    return new, target["decision_id"], frozenset(touched)
