"""Bad input gets one `keras-dml: error:` line naming the problem and the fix.

Each case used to end in a traceback, a misleading message or a silent success. The runs stop
before training (or right after building the model), so these tests are fast.
"""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from keras_dml.methods import list_methods
from keras_dml_cli import main
from keras_dml_cli.errors import configured_backend, error_message

TRAIN = ["train", "--dataset", "digits", "--quiet"]


def run_cli(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.err.strip()


def assert_one_line_error(code, err, *fragments):
    assert code == 1, (code, err)  # 1: an error of the run (2 is kept for usage errors)
    lines = err.splitlines()
    error_lines = [line for line in lines if line.startswith("keras-dml: error:")]
    assert len(error_lines) == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in error_lines[0], (fragment, error_lines[0])


@pytest.mark.parametrize("epochs", ["-1", "0"])
def test_non_positive_epochs(epochs, tmp_path, capsys):
    argv = [*TRAIN, "--method", "baseline", "--epochs", epochs, "--output", str(tmp_path / "r")]
    code, err = run_cli(argv, capsys)
    assert_one_line_error(code, err, f"epochs={epochs}", "--epochs N")
    assert not (tmp_path / "r" / "model.keras").exists()


def test_negative_image_size(tmp_path, capsys):
    argv = [*TRAIN, "--method", "baseline", "--image-size", "-5", "--output", str(tmp_path)]
    code, err = run_cli(argv, capsys)
    assert_one_line_error(code, err, "image_size=-5", "--image-size")


def test_unknown_top_level_key(tmp_path, capsys):
    argv = [*TRAIN, "--method", "baseline", "--set", "epoch=3", "--output", str(tmp_path)]
    code, err = run_cli(argv, capsys)
    assert_one_line_error(
        code, err, "Unknown run-configuration key 'epoch'. Did you mean 'epochs'?"
    )


def test_loss_argument_typo(tmp_path, capsys):
    loss = json.dumps({"name": "margin", "marign": 0.1})
    argv = [*TRAIN, "--method", "baseline", "--set", f"loss={loss}", "--output", str(tmp_path)]
    code, err = run_cli(argv, capsys)
    assert_one_line_error(code, err, "['marign']", "Did you mean 'margin'?", "`loss` entry")


def test_unknown_loss_name(tmp_path, capsys):
    argv = [
        *TRAIN,
        "--method",
        "baseline",
        "--set",
        "loss.name=tripplet",
        "--output",
        str(tmp_path),
    ]
    code, err = run_cli(argv, capsys)
    assert_one_line_error(code, err, "Unknown loss 'tripplet'", "Did you mean 'triplet'")


def test_optimizer_argument_typo_is_not_reported_as_unknown_optimizer(tmp_path, capsys):
    argv = [*TRAIN, "--method", "baseline", "--epochs", "1"]
    argv += ["--set", "optimizer.learnin_rate=0.1", "--output", str(tmp_path)]
    code, err = run_cli(argv, capsys)
    assert_one_line_error(
        code, err, "'optimizer.learnin_rate'", "Did you mean 'optimizer.learning_rate'?"
    )
    assert "Unknown optimizer" not in err


def test_unknown_optimizer_name(tmp_path, capsys):
    argv = [*TRAIN, "--method", "baseline", "--set", "optimizer.name=adamm"]
    code, err = run_cli([*argv, "--output", str(tmp_path)], capsys)
    assert_one_line_error(code, err, "Unknown optimizer 'adamm'")


def test_unknown_backbone_option(tmp_path, capsys):
    argv = [*TRAIN, "--method", "baseline", "--set", "backbone.widht=[8, 16, 32]"]
    code, err = run_cli([*argv, "--output", str(tmp_path)], capsys)
    assert_one_line_error(code, err, "'backbone.widht'", "Did you mean 'backbone.width'?")


def test_unknown_dataset_option(tmp_path, capsys):
    # Used to end in `TypeError: load_digits() got an unexpected keyword argument`.
    argv = [*TRAIN, "--method", "baseline", "--set", "dataset_options.resize_sise=40"]
    code, err = run_cli([*argv, "--output", str(tmp_path)], capsys)
    assert_one_line_error(code, err, "['resize_sise']", "Did you mean 'resize_size'?")
    assert "dataset_options" in err


@pytest.mark.parametrize(
    "flags, fragments",
    [
        (["--embedding-dim", "0"], ["model.embedding_dim=0", "--embedding-dim N"]),
        # A negative learning rate used to train (gradient ascent) and exit 0.
        (["--learning-rate", "-0.001"], ["optimizer.learning_rate=-0.001", "--learning-rate"]),
        (["--set", "optimizer.learning_rate=0"], ["optimizer.learning_rate=0"]),
        # The message named a flag `--eval-every` that does not exist.
        (["--set", "eval_every=0"], ["eval_every=0", "--set eval_every=N"]),
    ],
)
def test_non_positive_sizes_and_rates(flags, fragments, tmp_path, capsys):
    argv = [*TRAIN, "--method", "baseline", "--epochs", "1", *flags]
    code, err = run_cli([*argv, "--output", str(tmp_path)], capsys)
    assert_one_line_error(code, err, *fragments)
    assert "--eval-every" not in err
    assert not (tmp_path / "model.keras").exists()


@pytest.mark.parametrize("method", list_methods())
def test_unknown_method_option(method, tmp_path, capsys):
    argv = [*TRAIN, "--method", method, "--epochs", "1", "--set", "method_options.bogus=1"]
    code, err = run_cli([*argv, "--output", str(tmp_path)], capsys)
    assert_one_line_error(code, err, "bogus")
    assert not (tmp_path / "model.keras").exists()


@pytest.mark.parametrize("method", list_methods())
def test_unknown_model_option(method, tmp_path, capsys):
    argv = [*TRAIN, "--method", method, "--epochs", "1", "--set", "model.bogus_option=1"]
    code, err = run_cli([*argv, "--output", str(tmp_path)], capsys)
    assert_one_line_error(code, err, "bogus_option")


def test_batch_composition_the_data_cannot_hold_names_the_flags(tmp_path, capsys):
    argv = [*TRAIN, "--method", "baseline", "--batch-size", "64", "--m-per-class", "4"]
    code, err = run_cli([*argv, "--output", str(tmp_path)], capsys)
    assert_one_line_error(code, err, "need 16 classes", "--batch-size", "--m-per-class")


def test_too_many_learners_names_the_flag(tmp_path, capsys):
    argv = [*TRAIN, "--method", "dc", "--num-learners", "3", "--output", str(tmp_path)]
    code, err = run_cli(argv, capsys)
    assert_one_line_error(code, err, "num_learners=3", "--num-learners 2")


def test_unknown_zoo_name_in_evaluate_suggests_names(capsys):
    code, err = run_cli(["evaluate", "digits_dc_convnett", "--dataset", "digits"], capsys)
    assert_one_line_error(code, err, "digits_dc_convnet")


def test_not_published_card_in_evaluate(capsys):
    code, err = run_cli(["evaluate", "dc_resnet50_cub200", "--dataset", "cub200"], capsys)
    assert_one_line_error(code, err, "dc_resnet50_cub200", "not published")


def test_demo_unknown_method_lists_valid_names(capsys):
    code, err = run_cli(["demo", "--methods", "dcc", "--output", "unused"], capsys)
    assert_one_line_error(code, err, "dcc", "baseline", "dcml", "--methods")


def test_missing_fashion_mnist_names_the_data_dir_flag(tmp_path, capsys, monkeypatch):
    from keras_dml.data.datasets import fashion_mnist

    monkeypatch.setattr(fashion_mnist, "DEBIAN_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras_home"))
    argv = ["train", "--method", "baseline", "--dataset", "fashion_mnist"]
    argv += ["--data-dir", str(tmp_path / "empty"), "--output", str(tmp_path / "r")]
    code, err = run_cli(argv, capsys)
    assert_one_line_error(code, err, "--data-dir DIR")


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "/nonexistent/m.keras", "--format", "onnx", "--output", "m.onnx"],
        ["zoo", "info", "no_such_model"],
        ["evaluate", "/nonexistent/m.keras", "--dataset", "digits"],
        ["evaluate", "no_such_model", "--dataset", "digits"],
        ["search", "/nonexistent/m.keras", "--gallery", ".", "--query", "q.png"],
        ["report", "/nonexistent/run"],
        ["demo", "--methods", "no_such_method"],
        ["train", "--method", "baseline", "--dataset", "digits", "--epochs", "0", "--output", "x"],
    ],
)
def test_every_subcommand_uses_one_error_prefix_and_exit_code(argv, capsys):
    # One convention for scripts: 1 for an error of the run (export and zoo returned 1, the
    # others 2), 2 only for argparse usage errors (below).
    code, err = run_cli(argv, capsys)
    assert code == 1 and err.startswith("keras-dml: error:"), (code, err)


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "model.keras"],
        ["zoo", "info"],
        ["search", "model.keras"],
        ["report"],
        ["evaluate", "model.keras"],
        ["train", "--epochs", "x", "--output", "x"],
        ["no_such_command"],
    ],
)
def test_usage_errors_of_every_subcommand_use_the_same_prefix(argv, capsys):
    # argparse used to print `keras-dml export: error:` (the subcommand's own prog) here.
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2
    assert err.splitlines()[0].startswith("usage: keras-dml")
    assert err.splitlines()[-1].startswith("keras-dml: error: "), err


def test_evaluate_with_no_valid_query_warns_with_the_count():
    from keras_dml.evaluation import evaluate

    embeddings = np.random.default_rng(0).normal(size=(5, 4)).astype("float32")
    with pytest.warns(UserWarning, match="none of the 5 queries"):
        metrics = evaluate(embeddings, np.arange(5))
    assert metrics["num_excluded_queries"] == 5
    assert np.isnan(metrics["map@r"]) and np.isnan(metrics["recall@1"])
    assert np.isnan(metrics["nmi"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(embeddings, np.array([0, 0, 1, 1, 2]))


def test_gradcam_without_tf_keras_vis_names_the_vis_extra(monkeypatch):
    from keras_dml.utils import MissingDependencyError
    from keras_dml.visualization.gradcam import gradcam_maps

    monkeypatch.setitem(sys.modules, "tf_keras_vis", None)
    monkeypatch.setitem(sys.modules, "tf_keras_vis.gradcam", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "keras-dml\[vis\]"'):
        gradcam_maps(object(), np.zeros((1, 32, 32, 3)), learner=0)


def test_help_imports_no_tensorflow_and_documents_the_options():
    code = (
        "import sys; from keras_dml_cli import build_parser; p = build_parser(); "
        "p.format_help(); print('TF_IMPORTED' if 'tensorflow' in sys.modules else 'NO_TF')"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip().endswith("NO_TF")

    def help_text(*command):
        argv = [sys.executable, "-m", "keras_dml_cli", *command, "--help"]
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        return " ".join(out.split())

    train_help = help_text("train")
    for method in list_methods():
        assert f" {method} " in train_help, method
    from keras_dml.data import list_datasets

    # The --dataset entry itself lists every dataset (other options' help mentions some).
    dataset_help = train_help.split("--dataset DATASET ", 1)[1].split(" --data-dir")[0]
    for name in list_datasets():
        assert name in dataset_help, name
    assert "--image-size PIXELS side of the square images" in train_help
    assert "--dataset DATASET dataset name:" in train_help
    assert "--num-learners NUM_LEARNERS learners of an ensemble method" in train_help
    from keras_dml.demo import demo_methods

    assert f"--methods METHODS comma-separated subset of: {','.join(demo_methods())}" in (
        help_text("demo")
    )


@pytest.mark.parametrize("backend", ["faiss", "numpy"])
def test_nmi_reports_the_kmeans_that_gave_it(backend):
    """The search backend does not choose NMI's k-means: one k-means, named in `nmi_kmeans`."""
    pytest.importorskip("faiss")
    from keras_dml.evaluation import evaluate

    embeddings = np.random.default_rng(0).normal(size=(40, 4)).astype("float32")
    metrics = evaluate(embeddings, np.arange(40) % 4, backend=backend, seed=3, kmeans_nredo=2)
    assert metrics["nmi_kmeans"] == "keras-dml k-means (NumPy), seed 3, 20 iterations, best of 2"


def test_a_missing_keras_backend_names_the_extra_that_installs_it(monkeypatch):
    missing = ModuleNotFoundError("No module named 'tensorflow'", name="tensorflow")
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    message = error_message(missing)
    assert message.startswith("keras-dml: error: Keras' backend 'tensorflow' is not installed")
    assert 'pip install "keras-dml[tensorflow]"' in message
    assert 'KERAS_BACKEND=jax with pip install "keras-dml[jax]"' in message
    assert "\n" not in message


def test_tensorflow_missing_under_another_backend_names_the_feature_extra(monkeypatch):
    missing = ModuleNotFoundError("No module named 'tensorflow'", name="tensorflow")
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    assert error_message(missing) == (
        "keras-dml: error: `tensorflow` is needed for this command but is not installed: "
        'pip install "keras-dml[tensorflow]".'
    )


def test_the_backend_comes_from_keras_json_without_importing_keras(monkeypatch, tmp_path):
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    assert configured_backend() == "tensorflow"  # Keras' default
    (tmp_path / "keras.json").write_text('{"backend": "torch"}')
    assert configured_backend() == "torch"
