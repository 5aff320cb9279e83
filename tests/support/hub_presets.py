"""Small random-initialised keras-hub presets saved as local folders (what a hub download gives)."""

import os

# ImageNet mean and std as keras-hub image converters write them: x * scale + offset on [0, 255].
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
SCALE = [1.0 / (255.0 * s) for s in STD]
OFFSET = [-m / s for m, s in zip(MEAN, STD)]


def _save(backbone, converter, folder):
    os.makedirs(folder, exist_ok=True)
    backbone.save_to_preset(folder)
    converter.save_to_preset(folder)
    return str(folder)


def resnet_preset(folder):
    """A 4-stage bottleneck ResNet (keras-hub `ResNetBackbone`), 0.3 M parameters."""
    import keras_hub

    backbone = keras_hub.models.ResNetBackbone(
        input_conv_filters=[16],
        input_conv_kernel_sizes=[7],
        stackwise_num_filters=[64, 16, 16, 16],
        stackwise_num_blocks=[1, 1, 1, 1],
        stackwise_num_strides=[1, 2, 2, 2],
        block_type="bottleneck_block",
        use_pre_activation=False,
        image_shape=(None, None, 3),
    )
    converter = keras_hub.layers.ResNetImageConverter(
        image_size=(32, 32), scale=SCALE, offset=OFFSET
    )
    return _save(backbone, converter, folder)


def vit_preset(folder, image_size=32):
    """A 4-block ViT with a class token (keras-hub `ViTBackbone`), patch 8, width 16."""
    import keras_hub

    backbone = keras_hub.models.ViTBackbone(
        image_shape=(image_size, image_size, 3),
        patch_size=8,
        num_layers=4,
        num_heads=2,
        hidden_dim=16,
        mlp_dim=32,
    )
    converter = keras_hub.layers.ViTImageConverter(
        image_size=(image_size, image_size), scale=1 / 127.5, offset=-1.0
    )
    return _save(backbone, converter, folder)
