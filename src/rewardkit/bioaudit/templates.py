"""Pipeline templates: the correct analysis each paradigm starts from (SPEC §3 generator).

Usage::

    from rewardkit.bioaudit.templates import pipeline, substrate
    substrate("scrna")                       # the fixed 12-step all-L3 trajectory
    pipeline("deg", numpy.random.default_rng(0))   # 12–16 steps, acceptable choices drawn

Every step of a template is a choice the shipped rule pack accepts (level 3): the core steps in
order, plus optional steps, with parameters drawn among equally acceptable practice (e.g.
Harmony, scVI or BBKNN for batch integration). ``substrate`` is the core with the first choice
everywhere and no randomness.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["full_template", "pipeline", "substrate"]

Pick = Callable[[list[Any]], Any]
# A step: (action, optional?, params(pick), context(pick, shared)); shared carries values that
# several steps must agree on (cell count, number of batches, cohorts).
StepSpec = tuple[str, bool, Callable[[Pick, dict[str, Any]], dict[str, Any]], tuple[str, ...]]


def _scrna(pick: Pick) -> tuple[dict[str, Any], list[tuple[str, bool, dict, dict]]]:
    sh = {
        "n_cells": pick([8000, 4200, 12500, 6100, 15800]),
        "n_batches": pick([2, 3, 4]),
        "n_per_group": pick([4, 3, 5, 6]),
    }
    steps = [
        (
            "load_data",
            False,
            {"format": pick(["10x_h5", "mtx"])},
            {"n_cells": sh["n_cells"], "n_samples": 2 * sh["n_per_group"]},
        ),
        (
            "qc_filter",
            False,
            {
                "min_genes": pick([200, 250, 300]),
                "max_pct_mito": pick([20, 10, 15]),
                "min_cells": 3,
            },
            {"tissue": pick(["pbmc", "lung", "tumour"]), "n_cells": sh["n_cells"]},
        ),
        ("ambient_rna_correction", True, {"method": pick(["SoupX", "CellBender"])}, {}),
        (
            "doublet_detection",
            False,
            {
                "method": pick(["scDblFinder", "Scrublet", "DoubletFinder"]),
                "expected_rate": pick([0.06, 0.08, 0.075]),
            },
            {"platform": "droplet", "n_cells": sh["n_cells"]},
        ),
        (
            "normalization",
            False,
            {
                "method": pick(["shifted_log", "scran_pooling", "sctransform"]),
                "log_transform": True,
            },
            {},
        ),
        (
            "hvg_selection",
            False,
            {"n_top_genes": pick([2000, 3000, 4000]), "flavor": "seurat_v3"},
            {},
        ),
        (
            "batch_correction",
            False,
            {"method": pick(["harmony", "scVI", "BBKNN"])},
            {"n_batches": sh["n_batches"]},
        ),
        ("dimensionality_reduction", False, {"method": "pca", "n_comps": pick([50, 30, 40])}, {}),
        ("neighbors", False, {"n_neighbors": pick([15, 20, 30])}, {"n_batches": sh["n_batches"]}),
        ("clustering", False, {"method": "leiden", "resolution": pick([1.0, 0.5, 0.8, 1.2])}, {}),
        ("cell_cycle_scoring", True, {"method": "score_genes_cell_cycle", "regress": False}, {}),
        (
            "cell_type_annotation",
            False,
            {"method": pick(["marker_genes", "celltypist"]), "reviewed": True},
            {},
        ),
        ("visualization", True, {"method": "umap", "used_for": "display"}, {}),
        (
            "de_test",
            False,
            {
                "method": pick(["pseudobulk_deseq2", "pseudobulk_edger"]),
                "unit": "sample",
                "input": "raw_counts",
            },
            {"comparison": "condition", "n_samples_per_group": sh["n_per_group"]},
        ),
        ("multiple_testing_correction", False, {"method": "benjamini_hochberg", "alpha": 0.05}, {}),
        (
            "compositional_analysis",
            True,
            {"method": pick(["scCODA", "propeller"])},
            {"n_samples_per_group": sh["n_per_group"]},
        ),
    ]
    return sh, steps


def _deg(pick: Pick) -> tuple[dict[str, Any], list[tuple[str, bool, dict, dict]]]:
    n_rep = pick([4, 3, 5, 6, 8])
    n_batches = pick([2, 1, 3])
    paired = pick([False, True])
    steps = [
        (
            "load_counts",
            False,
            {"source": pick(["featureCounts", "salmon_tximport"])},
            {"n_samples": 2 * n_rep},
        ),
        ("sample_qc", False, {"method": pick(["pca_outliers", "sample_distance_heatmap"])}, {}),
        ("outlier_removal", True, {"n_removed": 1}, {"documented_reason": True}),
        (
            "filter_low_counts",
            False,
            {"method": pick(["filterByExpr", "min_count_rowsum"]), "min_count": pick([10, 5])},
            {},
        ),
        ("normalization", False, {"method": pick(["median_of_ratios", "TMM"])}, {}),
        ("surrogate_variables", True, {"method": "svaseq", "n_sv": pick([1, 2, 3])}, {}),
        (
            "design_matrix",
            False,
            {"formula": "~ batch + condition", "includes_batch": True, "includes_subject": paired},
            {"n_batches": n_batches, "paired": paired, "batch_confounded": False},
        ),
        ("dispersion_estimation", False, {"method": pick(["DESeq2", "edgeR_QL"])}, {}),
        (
            "de_test",
            False,
            {"method": pick(["DESeq2_wald", "edgeR_QLF", "limma_voom"]), "input": "raw_counts"},
            {"n_replicates_per_group": n_rep},
        ),
        (
            "multiple_testing_correction",
            False,
            {"method": "benjamini_hochberg", "alpha": pick([0.05, 0.1])},
            {},
        ),
        ("lfc_shrinkage", False, {"method": pick(["apeglm", "ashr"])}, {}),
        (
            "result_filtering",
            False,
            {"use": "padj", "padj_threshold": 0.05, "lfc_threshold_mode": pick(["treat", "none"])},
            {},
        ),
        (
            "enrichment_analysis",
            False,
            {
                "method": pick(["GSEA", "ORA"]),
                "background": "expressed_genes",
                "ranking": "shrunken_lfc",
            },
            {},
        ),
        ("heatmap_visualization", True, {"genes": "top_padj"}, {}),
        ("visualization", False, {"plot": pick(["volcano", "ma_plot"])}, {}),
        ("report_export", True, {"format": pick(["html", "csv"])}, {}),
    ]
    return {}, steps


def _pan(pick: Pick) -> tuple[dict[str, Any], list[tuple[str, bool, dict, dict]]]:
    n_cohorts = pick([8, 4, 12, 6])
    steps = [
        (
            "cohort_selection",
            False,
            {"source": "TCGA", "selection": "pre_registered"},
            {"n_cohorts": n_cohorts, "n_patients": pick([3200, 1500, 5100, 7800])},
        ),
        (
            "sample_qc",
            False,
            {
                "purity_filter": True,
                "min_purity": pick([0.3, 0.4, 0.6]),
                "deduplicate_patients": True,
            },
            {},
        ),
        ("mutation_harmonization", True, {"caller": "MC3"}, {}),
        (
            "normalization",
            False,
            {"method": pick(["log2_TPM", "RSEM_upper_quartile_log2"]), "cross_platform": True},
            {"mixed_platforms": pick([False, True])},
        ),
        (
            "batch_correction",
            False,
            {
                "method": pick(["ComBat", "ComBat_seq"]),
                "batch_variable": pick(["sequencing_center", "plate"]),
            },
            {"n_cohorts": n_cohorts},
        ),
        (
            "feature_selection",
            False,
            {
                "method": pick(["variance", "mad"]),
                "n_features": pick([5000, 2000, 3000]),
                "uses_outcome": False,
            },
            {},
        ),
        (
            "clustering",
            False,
            {
                "method": pick(["consensus_clustering", "NMF"]),
                "k_selection": pick(["consensus_cdf", "cophenetic"]),
            },
            {"n_cohorts": n_cohorts},
        ),
        (
            "survival_endpoint",
            False,
            {"endpoint": pick(["PFI", "DSS"])},
            {"indolent_types": pick([True, False])},
        ),
        (
            "survival_model",
            False,
            {"method": "cox", "stratify_by": "cancer_type", "predictor_cut": "continuous"},
            {"n_cohorts": n_cohorts, "events_per_variable": pick([24, 12, 40, 18])},
        ),
        (
            "ph_assumption_check",
            False,
            {
                "method": "schoenfeld",
                "result": pick(["satisfied", "violated"]),
                "remedy": "time_varying_coefficient",
            },
            {},
        ),
        ("report_hazard_ratios", False, {"ci": 0.95}, {}),
        (
            "association_test",
            False,
            {
                "method": pick(["linear_mixed_model", "stratified_cmh"]),
                "adjust_for_cancer_type": True,
            },
            {},
        ),
        ("multiple_testing_correction", False, {"method": "benjamini_hochberg", "alpha": 0.05}, {}),
        ("validation", True, {"method": pick(["held_out_cohort", "external_cohort"])}, {}),
        ("km_visualization", True, {"groups": "clusters"}, {}),
        ("purity_sensitivity", True, {"method": "ESTIMATE"}, {}),
    ]
    return {}, steps


_BUILDERS = {"deg": _deg, "pan": _pan, "scrna": _scrna}


def _assemble(
    paradigm: str, pick: Pick, keep_optional: Callable[[str], bool]
) -> list[dict[str, Any]]:
    _, steps = _BUILDERS[paradigm](pick)
    chosen = [s for s in steps if not s[1] or keep_optional(s[0])]
    return [
        {
            "decision_id": f"d{i:02d}",
            "action": action,
            "params": params,
            "context": {"paradigm": paradigm, **context},
        }
        for i, (action, _, params, context) in enumerate(chosen, start=1)
    ]


def substrate(paradigm: str) -> list[dict[str, Any]]:
    """The 12 core steps with the first listed choice everywhere: the spike-in substrate."""
    return _assemble(paradigm, lambda options: options[0], lambda action: False)


def full_template(paradigm: str) -> list[dict[str, Any]]:
    """Every step, optional ones included (16), first choice everywhere: the rule examples'
    base, so that a rule on an optional step has a decision to fire on."""
    return _assemble(paradigm, lambda options: options[0], lambda action: True)


def pipeline(paradigm: str, rng: np.random.Generator, *, p_optional: float = 0.5) -> list[dict]:
    """A correct trajectory of 12–16 steps: core steps plus each optional step w.p. p_optional."""

    def pick(options: list[Any]) -> Any:
        return options[int(rng.integers(len(options)))]

    return _assemble(paradigm, pick, lambda action: bool(rng.random() < p_optional))
