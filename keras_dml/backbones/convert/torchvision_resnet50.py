"""torchvision `resnet50` state dict -> keras-dml `resnet50` variant "v1.5"."""

from keras_dml.backbones.convert.mapping import ConvBN
from keras_dml.backbones.resnet50_v15 import STAGES

DESCRIPTION = "torchvision resnet50"
IGNORED_PREFIXES = ("fc.",)


def plan(model):
    """The `ConvBN` list of ResNet-50 v1.5 (`model` is unused: names are fixed)."""
    del model
    entries = [ConvBN("conv1_conv", "conv1", "conv1_bn", "bn1")]
    for layer_index, (stage, blocks, _) in enumerate(STAGES, start=1):
        for block in range(blocks):
            keras_block = f"conv{stage}_block{block + 1}"
            torch_block = f"layer{layer_index}.{block}"
            if block == 0:
                entries.append(
                    ConvBN(
                        f"{keras_block}_0_conv",
                        f"{torch_block}.downsample.0",
                        f"{keras_block}_0_bn",
                        f"{torch_block}.downsample.1",
                    )
                )
            for k in (1, 2, 3):
                entries.append(
                    ConvBN(
                        f"{keras_block}_{k}_conv",
                        f"{torch_block}.conv{k}",
                        f"{keras_block}_{k}_bn",
                        f"{torch_block}.bn{k}",
                    )
                )
    return entries
