"""The paper recipes (recipes/configs/*.json) carry each paper's key settings.

Where a recipe follows the authors' code instead of the paper text (e.g. DCML's batch and
learning rate, D&C's batch of 80 on CUB / Cars), the recipe's description says so and only the
settings the paper states and the recipe follows are pinned here.
"""

import json
import pathlib

import pytest

from tests.support.paths import REPO_ROOT

CONFIGS = pathlib.Path(REPO_ROOT) / "recipes" / "configs"


def recipes(method):
    """`{dataset: config}` of a method's GPU recipes (the Fashion-MNIST CPU budget left out)."""
    found = {}
    for path in sorted(CONFIGS.glob(f"{method}_*.json")):
        config = json.loads(path.read_text())
        if config["method"] == method and config["dataset"] != "fashion_mnist":
            found[config["dataset"]] = config
    return found


def check(config, expected):
    """Asserts `expected` (dotted keys -> values) against `config`, naming the recipe."""
    for dotted, value in expected.items():
        actual = config
        for key in dotted.split("."):
            actual = actual[key]
        assert actual == pytest.approx(value) if isinstance(value, float) else actual == value, (
            f"{config['method']}_{config['dataset']}.json: {dotted} is {actual!r}, "
            f"the paper's value is {value!r}"
        )


def test_bier_recipes_follow_the_paper():
    # Opitz et al., TPAMI 2020: GoogLeNet, 512 = 96-160-256, binomial deviance (Sec. 4.1-4.4,
    # 4.8); A-BIER: adversarial loss, Adam 1e-5 (Sec. 4.6, Table 7), lambda_div 1e-3 (Sec. 4.7,
    # Fig. 7). Embedding layer x10 learning rate: the authors' TensorFlow code.
    found = recipes("bier")
    assert set(found) == {"cub200", "cars196", "sop"}
    for config in found.values():
        check(
            config,
            {
                "backbone.name": "googlenet",
                "model.group_sizes": [96, 160, 256],
                "model.loss": "binomial_deviance",
                "model.diversity": "adversarial",
                "model.boosting": "paper",
                "model.lambda_div": 1e-3,
                "optimizer.name": "adam",
                "optimizer.learning_rate": 1e-5,
                "method_options.embedding_lr_multiplier": 10.0,
            },
        )


def test_dc_recipes_follow_the_paper():
    # Sanakoyeu et al., CVPR 2019, Sec. 4.2: ResNet-50, d = 128, K = 4 on CUB / Cars and 8 on
    # the others, T = 2, margin loss beta 1.2 (margin 0.2 of Wu et al.), m = 4 images per class,
    # batch 80 on SOP and In-shop; k-means on the concatenated embedding (Sec. 3.2).
    found = recipes("dc")
    assert set(found) == {"cub200", "cars196", "sop", "inshop", "vehicleid"}
    for dataset, config in found.items():
        check(
            config,
            {
                "backbone.name": "resnet50",
                "model.embedding_dim": 128,
                "model.num_learners": 4 if dataset in ("cub200", "cars196") else 8,
                "method_options.recluster_every": 2,
                "method_options.cluster_on": "embedding",
                "loss.name": "margin",
                "loss.beta": 1.2,
                "loss.margin": 0.2,
                "m_per_class": 4,
                "optimizer.name": "adam",
            },
        )
        if dataset in ("sop", "inshop"):
            check(config, {"batch_size": 80})


HDC_TABLE_9 = {
    # dataset: (weight decay, lambda, K_max, E, fine-tuning epoch, total epochs)
    "cub200": (1e-3, 1.0, 4, 10, None, 120),
    "cars196": (1e-3, 1.0, 4, 10, None, 120),
    "inshop": (1e-4, 0.2, 8, 2, None, 400),
    "sop": (1e-4, 0.01, 32, 2, 80, 170),
}


def test_hdc_recipes_follow_table_9():
    # Hierarchical D&C, TPAMI, Appendix B, Table 9 (learning rate 1e-5 everywhere) and its text:
    # K_max = 8, 16, 32 for In-shop, VehicleID, SOP; E = 2 for all large datasets.
    found = recipes("hdc")
    assert set(found) == {"cub200", "cars196", "sop", "inshop", "vehicleid"}
    for dataset, config in found.items():
        check(config, {"model.embedding_dim": 512, "optimizer.learning_rate": 1e-5})
        if dataset == "vehicleid":
            check(config, {"model.max_learners": 16, "method_options.division_every": 2})
            continue
        decay, lambda_, k_max, every, finetune, epochs = HDC_TABLE_9[dataset]
        check(
            config,
            {
                "optimizer.weight_decay": decay,
                "model.orthogonality_weight": lambda_,
                "model.max_learners": k_max,
                "method_options.division_every": every,
                "method_options.finetune_epoch": finetune,
                "epochs": epochs,
            },
        )


def test_abe_recipes_follow_the_paper():
    # Kim et al., ECCV 2018, Sec. 4: ABE-8 on GoogLeNet, embedding 512 (512 / M per learner),
    # m_c = m_div = 1 (Eq. 8-10), SGD with momentum 0.9, batch 64.
    found = recipes("abe")
    assert set(found) == {"cub200", "cars196", "sop", "inshop"}
    for config in found.values():
        check(
            config,
            {
                "backbone.name": "googlenet",
                "model.num_learners": 8,
                "model.embedding_dim": 512,
                "model.margin": 1.0,
                "model.divergence_margin": 1.0,
                "model.lambda_div": 1.0,
                "optimizer.name": "sgd",
                "optimizer.momentum": 0.9,
                "batch_size": 64,
            },
        )


def test_dcml_recipes_follow_the_paper():
    # Zheng et al., CVPR 2021, Sec. 4.2: ResNet-50, 4 learners of 128, 8 compositors,
    # lambda_m = 1, lambda_r = 0.05; margin loss with distance-weighted sampling (Table 5).
    found = recipes("dcml")
    assert set(found) == {"cub200", "cars196", "sop"}
    for config in found.values():
        check(
            config,
            {
                "backbone.name": "resnet50",
                "model.num_learners": 4,
                "model.learner_dim": 128,
                "model.num_compositors": 8,
                "model.lambda_reinforce": 0.05,
                "model.lambda_subtask": 1.0,
                "loss.name": "margin",
            },
        )


# The ImageNet weights each paper starts from, as the recipes' `backbone.weights` name them.
# ResNet-50: torchvision's IMAGENET1K_V1 file, whose name carries the first 8 hex digits of its
# sha256 (torch.hub checks that prefix); Caffe GoogLeNet: the BVLC model zoo's
# bvlc_googlenet.caffemodel with the sha1 its readme publishes.
TORCHVISION_RESNET50 = {
    "pretrained": "imagenet",
    "source_file": "resnet50-0676ba61.pth",
    "source_sha256": "0676ba61",
}
BVLC_GOOGLENET = {
    "pretrained": "imagenet",
    "source_file": "bvlc_googlenet.caffemodel",
    "source_sha1": "405fc5acd08a3bb12de8ee5e23a96bec22f08204",
}
PAPER_BACKBONES = {
    # method: (backbone, variant, expected weights, frozen BatchNorm or None when the paper and
    # the reference code say nothing, in which case the recipe's choice is not pinned)
    # ABE, ECCV 2018 Sec. 4 and 4.1: GoogLeNet in Caffe, initialised from ImageNet, 224 crops,
    # ImageNet mean subtracted (no BatchNorm in the Caffe GoogLeNet).
    "abe": ("googlenet", "caffe", BVLC_GOOGLENET, None),
    # A-BIER, TPAMI 2020 Sec. 4 (implementation details): GoogLeNet with weights dumped from the
    # Caffe model, 224 crops, ImageNet mean subtracted.
    "bier": ("googlenet", "caffe", BVLC_GOOGLENET, None),
    # D&C, CVPR 2019 Sec. 4.2: ResNet-50 after Wu et al.'s PyTorch code, 224 crops; the reference
    # code (the authors' PyTorch repository) freezes the BatchNorm statistics.
    "dc": ("resnet50", "v1.5", TORCHVISION_RESNET50, True),
    # Hierarchical D&C, TPAMI Sec. 4.2: ResNet-50 pretrained on ImageNet, PyTorch, 224 crops; it
    # extends the D&C code, which freezes BatchNorm.
    "hdc": ("resnet50", "v1.5", TORCHVISION_RESNET50, True),
    # DCML, CVPR 2021 Sec. 4.2: PyTorch, ImageNet-pretrained ResNet-50, random resized 224 crops.
    "dcml": ("resnet50", "v1.5", TORCHVISION_RESNET50, None),
}


@pytest.mark.parametrize("method", sorted(PAPER_BACKBONES))
def test_recipes_start_from_the_papers_imagenet_backbone(method):
    name, variant, weights, frozen = PAPER_BACKBONES[method]
    found = recipes(method)
    assert found
    for config in found.values():
        expected = {
            "image_size": 224,
            "backbone.name": name,
            "backbone.variant": variant,
            "backbone.weights": weights,
        }
        if frozen is not None:
            expected["backbone.freeze_batchnorm"] = frozen
        check(config, expected)
        # The Caffe GoogLeNet keeps its LRN and has no BatchNorm: no option may change that.
        assert not {"lrn", "batchnorm"} & set(config["backbone"]), config["backbone"]


# Training crops the papers state: resize the shorter side to 256, random 224 crop and flip
# (keras-dml's "crop_flip") for ABE (Sec. 4.1), A-BIER (Sec. 4), D&C (Sec. 4.2) and hierarchical
# D&C (Sec. 4.2); DCML (Sec. 4.2): random resized 224 crops and flips.
PAPER_AUGMENTATION = {
    "abe": "crop_flip",
    "bier": "crop_flip",
    "dc": "crop_flip",
    "hdc": "crop_flip",
    "dcml": "resized_crop_flip",
}


@pytest.mark.parametrize("method", sorted(PAPER_AUGMENTATION))
def test_recipes_train_on_the_papers_crops(method):
    for config in recipes(method).values():
        # Without an `augmentation` key, image-file datasets train on "crop_flip"
        # (keras_dml.data.ImageDataset).
        augmentation = config.get("augmentation", "crop_flip")
        assert augmentation == PAPER_AUGMENTATION[method], (config["dataset"], augmentation)


@pytest.mark.parametrize("method", sorted(PAPER_BACKBONES))
def test_recipe_descriptions_name_the_expected_weights_file(method):
    for config in recipes(method).values():
        weights = config["backbone"]["weights"]
        digest = weights.get("source_sha256") or weights["source_sha1"]
        assert weights["source_file"] in config["description"], config["description"]
        assert digest in config["description"], config["description"]
