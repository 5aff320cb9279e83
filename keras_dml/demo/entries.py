"""The run-configuration entries of each method in `keras-dml demo`, over `demo.BASE_CONFIG`.

Each follows its paper's defaults scaled down to a 64-d embedding on 32 px images (2 CPU cores).
A registered method joins the demo with an entry here; a plug-in method adds its own to
`DEMO_ENTRIES` before `run_demo`.
"""

DEMO_ENTRIES = {
    "baseline": {"model": {"embedding_dim": 64}},
    "dc": {
        "model": {"embedding_dim": 64, "num_learners": 2},
        "method_options": {"recluster_every": 2},
    },
    "hdc": {
        "model": {"embedding_dim": 64, "max_learners": 2},
        "method_options": {"division_every": 2},
    },
    "bier": {
        "model": {"embedding_dim": 64, "num_learners": 3},
        "loss": {"name": "binomial_deviance"},
    },
    "abe": {"model": {"embedding_dim": 64, "num_learners": 2}},
    "dcml": {"model": {"num_learners": 4, "learner_dim": 16, "num_compositors": 4}},
}
