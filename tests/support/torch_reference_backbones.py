"""PyTorch reference modules for the weight-conversion tests, with the sources' key names.

torchvision cannot be installed next to the CPU torch wheel of the test environment, so these
modules rebuild, in plain `torch.nn`, torchvision's `googlenet` (with its auxiliary heads, whose
keys the conversion must ignore) and `resnet50`, the `bninception` port of Cadene's
pretrainedmodels, and Caffe's `bvlc_googlenet` (whose blobs the tests write as a
`.caffemodel`): same layers, hyper-parameters, forward pass and `state_dict()` keys (layer
names for Caffe). The forward functions return the final feature map (before global pooling)
for an input already preprocessed as the source documents.
"""

import torch
import torch.nn.functional as F
from torch import nn

# --- torchvision googlenet -------------------------------------------------------------------


class BasicConv2d(nn.Module):
    """torchvision's conv (no bias) -> BatchNorm (eps 1e-3) -> ReLU."""

    def __init__(self, in_channels, out_channels, **kwargs):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(out_channels, eps=0.001)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class Inception(nn.Module):
    """torchvision's Inception block (its "5x5" branch uses a 3x3 kernel)."""

    def __init__(self, in_channels, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj):
        super().__init__()
        self.branch1 = BasicConv2d(in_channels, ch1x1, kernel_size=1)
        self.branch2 = nn.Sequential(
            BasicConv2d(in_channels, ch3x3red, kernel_size=1),
            BasicConv2d(ch3x3red, ch3x3, kernel_size=3, padding=1),
        )
        self.branch3 = nn.Sequential(
            BasicConv2d(in_channels, ch5x5red, kernel_size=1),
            BasicConv2d(ch5x5red, ch5x5, kernel_size=3, padding=1),
        )
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=True),
            BasicConv2d(in_channels, pool_proj, kernel_size=1),
        )

    def forward(self, x):
        branches = (self.branch1, self.branch2, self.branch3, self.branch4)
        return torch.cat([branch(x) for branch in branches], 1)


class InceptionAux(nn.Module):
    """torchvision's auxiliary classifier: only its keys matter here."""

    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.conv = BasicConv2d(in_channels, 128, kernel_size=1)
        self.fc1 = nn.Linear(2048, 1024)
        self.fc2 = nn.Linear(1024, num_classes)


class TorchvisionGoogLeNet(nn.Module):
    """torchvision `googlenet(aux_logits=True, transform_input=True)`; `features` = inception5b."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = BasicConv2d(3, 64, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.conv2 = BasicConv2d(64, 64, kernel_size=1)
        self.conv3 = BasicConv2d(64, 192, kernel_size=3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception3a = Inception(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = Inception(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception4a = Inception(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = Inception(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = Inception(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = Inception(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = Inception(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = nn.MaxPool2d(2, stride=2, ceil_mode=True)
        self.inception5a = Inception(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = Inception(832, 384, 192, 384, 48, 128, 128)
        self.aux1 = InceptionAux(512, num_classes)
        self.aux2 = InceptionAux(528, num_classes)
        self.fc = nn.Linear(1024, num_classes)

    @staticmethod
    def transform_input(x):
        """torchvision's `_transform_input` (ImageNet mean/std input -> [-1, 1])."""
        x_ch0 = torch.unsqueeze(x[:, 0], 1) * (0.229 / 0.5) + (0.485 - 0.5) / 0.5
        x_ch1 = torch.unsqueeze(x[:, 1], 1) * (0.224 / 0.5) + (0.456 - 0.5) / 0.5
        x_ch2 = torch.unsqueeze(x[:, 2], 1) * (0.225 / 0.5) + (0.406 - 0.5) / 0.5
        return torch.cat((x_ch0, x_ch1, x_ch2), 1)

    def features(self, x):
        x = self.transform_input(x)
        x = self.maxpool1(self.conv1(x))
        x = self.maxpool2(self.conv3(self.conv2(x)))
        x = self.maxpool3(self.inception3b(self.inception3a(x)))
        for block in ("4a", "4b", "4c", "4d", "4e"):
            x = getattr(self, f"inception{block}")(x)
        x = self.maxpool4(x)
        return self.inception5b(self.inception5a(x))


# --- torchvision resnet50 --------------------------------------------------------------------


class Bottleneck(nn.Module):
    """torchvision's v1.5 bottleneck: the stride is in `conv2` (3x3)."""

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.downsample = downsample

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class TorchvisionResNet50(nn.Module):
    """torchvision `resnet50`; `features` = the output of `layer4`."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        inplanes = 64
        for index, (planes, blocks, stride) in enumerate(
            ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)), start=1
        ):
            downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes * 4, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * 4),
            )
            layers = [Bottleneck(inplanes, planes, stride, downsample)]
            inplanes = planes * 4
            layers += [Bottleneck(inplanes, planes) for _ in range(1, blocks)]
            setattr(self, f"layer{index}", nn.Sequential(*layers))
        self.fc = nn.Linear(2048, num_classes)

    def features(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        for index in range(1, 5):
            x = getattr(self, f"layer{index}")(x)
        return x


# --- pretrainedmodels bninception ------------------------------------------------------------

# (name, input channels, #1x1, #3x3 reduce, #3x3, double reduce, double, pool kind, pool proj);
# reduction blocks have no 1x1 and no projection (None).
_BN_INCEPTION_BLOCKS = (
    ("inception_3a", 192, 64, 64, 64, 64, 96, "avg", 32),
    ("inception_3b", 256, 64, 64, 96, 64, 96, "avg", 64),
    ("inception_3c", 320, None, 128, 160, 64, 96, "max_s2", None),
    ("inception_4a", 576, 224, 64, 96, 96, 128, "avg", 128),
    ("inception_4b", 576, 192, 96, 128, 96, 128, "avg", 128),
    ("inception_4c", 576, 160, 128, 160, 128, 160, "avg", 128),
    ("inception_4d", 608, 96, 128, 192, 160, 192, "avg", 128),
    ("inception_4e", 608, None, 128, 192, 192, 256, "max_s2", None),
    ("inception_5a", 1056, 352, 192, 320, 160, 224, "avg", 128),
    ("inception_5b", 1024, 352, 192, 320, 192, 224, "max", 128),
)


class BNInceptionPort(nn.Module):
    """pretrainedmodels `bninception`: conv (with bias) `n`, BatchNorm `n_bn` (eps 1e-5), ReLU.

    The port's forward applies in-place ReLUs to the BatchNorm outputs it then passes on, so
    every conv -> BN is followed by a ReLU as written here. `features` = inception_5b.
    """

    def __init__(self, num_classes=1000):
        super().__init__()
        self._convs = []
        self._add("conv1_7x7_s2", 3, 64, 7, stride=2, padding=3)
        self._add("conv2_3x3_reduce", 64, 64, 1)
        self._add("conv2_3x3", 64, 192, 3, padding=1)
        for name, cin, n1, n3r, n3, ndr, nd, _, nproj in _BN_INCEPTION_BLOCKS:
            stride = 2 if n1 is None else 1
            if n1 is not None:
                self._add(f"{name}_1x1", cin, n1, 1)
            self._add(f"{name}_3x3_reduce", cin, n3r, 1)
            self._add(f"{name}_3x3", n3r, n3, 3, stride=stride, padding=1)
            self._add(f"{name}_double_3x3_reduce", cin, ndr, 1)
            self._add(f"{name}_double_3x3_1", ndr, nd, 3, padding=1)
            self._add(f"{name}_double_3x3_2", nd, nd, 3, stride=stride, padding=1)
            if nproj is not None:
                self._add(f"{name}_pool_proj", cin, nproj, 1)
        self.last_linear = nn.Linear(1024, num_classes)

    def _add(self, name, cin, cout, kernel, stride=1, padding=0):
        setattr(self, name, nn.Conv2d(cin, cout, kernel, stride=stride, padding=padding))
        setattr(self, f"{name}_bn", nn.BatchNorm2d(cout, eps=1e-05, momentum=0.9, affine=True))

    def _cbr(self, name, x):
        return F.relu(getattr(self, f"{name}_bn")(getattr(self, name)(x)))

    def _block(self, x, name, n1, pool_kind, nproj):
        outputs = []
        if n1 is not None:
            outputs.append(self._cbr(f"{name}_1x1", x))
        outputs.append(self._cbr(f"{name}_3x3", self._cbr(f"{name}_3x3_reduce", x)))
        double = self._cbr(f"{name}_double_3x3_reduce", x)
        outputs.append(self._cbr(f"{name}_double_3x3_2", self._cbr(f"{name}_double_3x3_1", double)))
        if pool_kind == "avg":
            pool = F.avg_pool2d(x, 3, stride=1, padding=1, ceil_mode=True, count_include_pad=True)
        elif pool_kind == "max":
            pool = F.max_pool2d(x, 3, stride=1, padding=1, ceil_mode=True)
        else:
            pool = F.max_pool2d(x, 3, stride=2, ceil_mode=True)
        outputs.append(pool if nproj is None else self._cbr(f"{name}_pool_proj", pool))
        return torch.cat(outputs, 1)

    def features(self, x):
        x = F.max_pool2d(self._cbr("conv1_7x7_s2", x), 3, stride=2, ceil_mode=True)
        x = self._cbr("conv2_3x3", self._cbr("conv2_3x3_reduce", x))
        x = F.max_pool2d(x, 3, stride=2, ceil_mode=True)
        for name, _, n1, _, _, _, _, pool_kind, nproj in _BN_INCEPTION_BLOCKS:
            x = self._block(x, name, n1, pool_kind, nproj)
        return x


# --- Caffe bvlc_googlenet ---------------------------------------------------------------------

# (name, input channels, #1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj), deploy.prototxt.
_CAFFE_INCEPTION_BLOCKS = (
    ("inception_3a", 192, 64, 96, 128, 16, 32, 32),
    ("inception_3b", 256, 128, 128, 192, 32, 96, 64),
    ("inception_4a", 480, 192, 96, 208, 16, 48, 64),
    ("inception_4b", 512, 160, 112, 224, 24, 64, 64),
    ("inception_4c", 512, 128, 128, 256, 24, 64, 64),
    ("inception_4d", 512, 112, 144, 288, 32, 64, 64),
    ("inception_4e", 528, 256, 160, 320, 32, 128, 128),
    ("inception_5a", 832, 256, 160, 320, 32, 128, 128),
    ("inception_5b", 832, 384, 192, 384, 48, 128, 128),
)
_POOL_AFTER = {"inception_3b", "inception_4e"}  # pool3 / pool4 (3x3 / 2, ceil mode)


class CaffeGoogLeNet(nn.Module):
    """bvlc_googlenet's deploy.prototxt: conv (with bias) + ReLU, Caffe pooling, LRN.

    Caffe's max pooling rounds output sizes up (`ceil_mode=True`); its ACROSS_CHANNELS LRN
    computes `x / (k + alpha / n * sum over n channels of x^2) ** beta`, which is
    `nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1)` (PyTorch also divides alpha by n).
    Convolutions are kept under Caffe's layer names (`conv1/7x7_s2`) in `convs`;
    `caffe_layers()` gives them as `{name: [weight, bias]}`, a `.caffemodel`'s blobs. The
    classifiers (`loss1/*` ...) are not built: the conversion ignores them. `features` =
    inception_5b.
    """

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleDict()
        self.lrn = nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)
        self._add("conv1/7x7_s2", 3, 64, 7, stride=2, padding=3)
        self._add("conv2/3x3_reduce", 64, 64, 1)
        self._add("conv2/3x3", 64, 192, 3, padding=1)
        for name, cin, n1, n3r, n3, n5r, n5, nproj in _CAFFE_INCEPTION_BLOCKS:
            self._add(f"{name}/1x1", cin, n1, 1)
            self._add(f"{name}/3x3_reduce", cin, n3r, 1)
            self._add(f"{name}/3x3", n3r, n3, 3, padding=1)
            self._add(f"{name}/5x5_reduce", cin, n5r, 1)
            self._add(f"{name}/5x5", n5r, n5, 5, padding=2)
            self._add(f"{name}/pool_proj", cin, nproj, 1)

    def _add(self, name, cin, cout, kernel, stride=1, padding=0):
        self.convs[name] = nn.Conv2d(cin, cout, kernel, stride=stride, padding=padding)

    def _relu_conv(self, name, x):
        return F.relu(self.convs[name](x))

    def caffe_layers(self):
        """`{caffe layer name: [weight [out, in, kh, kw], bias [out]]}` as numpy arrays."""
        return {
            name: [conv.weight.detach().numpy(), conv.bias.detach().numpy()]
            for name, conv in self.convs.items()
        }

    def _pool(self, x):
        return F.max_pool2d(x, 3, stride=2, ceil_mode=True)

    def features(self, x):
        x = self.lrn(self._pool(self._relu_conv("conv1/7x7_s2", x)))
        x = self._relu_conv("conv2/3x3", self._relu_conv("conv2/3x3_reduce", x))
        x = self._pool(self.lrn(x))
        for name, *_ in _CAFFE_INCEPTION_BLOCKS:
            pool = F.max_pool2d(x, 3, stride=1, padding=1, ceil_mode=True)
            x = torch.cat(
                [
                    self._relu_conv(f"{name}/1x1", x),
                    self._relu_conv(f"{name}/3x3", self._relu_conv(f"{name}/3x3_reduce", x)),
                    self._relu_conv(f"{name}/5x5", self._relu_conv(f"{name}/5x5_reduce", x)),
                    self._relu_conv(f"{name}/pool_proj", pool),
                ],
                1,
            )
            if name in _POOL_AFTER:
                x = self._pool(x)
        return x


# --- preprocessing each source documents -----------------------------------------------------

_IMAGENET_MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
_IMAGENET_STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def torchvision_preprocess(pixels):
    """Raw RGB pixels `[N, 3, H, W]` in [0, 255] -> torchvision's `(x / 255 - mean) / std`."""
    return (pixels / 255.0 - _IMAGENET_MEAN) / _IMAGENET_STD


def bninception_preprocess(pixels):
    """Raw RGB pixels `[N, 3, H, W]` -> BGR in [0, 255] minus the mean (104, 117, 128)."""
    bgr = pixels[:, [2, 1, 0]]
    return bgr - torch.tensor([104.0, 117.0, 128.0]).view(1, 3, 1, 1)


def caffe_googlenet_preprocess(pixels):
    """Raw RGB pixels `[N, 3, H, W]` -> BGR in [0, 255] minus bvlc_googlenet's mean (B, G, R)."""
    bgr = pixels[:, [2, 1, 0]]
    return bgr - torch.tensor([104.0, 117.0, 123.0]).view(1, 3, 1, 1)


def randomize_batchnorm(module, images, seed):
    """Sets every BatchNorm to non-trivial statistics and affine parameters, seeded.

    The running statistics are first measured on `images` (so activations keep a sane scale
    through the network), then perturbed: mean shifted by up to half a standard deviation,
    variance scaled by 0.5..2, gamma in 0.5..1.5, beta in -0.2..0.2.
    """
    generator = torch.Generator().manual_seed(seed)
    norms = [m for m in module.modules() if isinstance(m, nn.BatchNorm2d)]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # cumulative average: one batch sets the statistics exactly
    module.train()
    with torch.no_grad():
        module.features(images)
        for norm in norms:
            size = norm.num_features
            std = norm.running_var.sqrt()
            shift = (torch.rand(size, generator=generator) - 0.5) * std
            norm.running_mean += shift
            norm.running_var *= 0.5 + 1.5 * torch.rand(size, generator=generator)
            norm.weight.copy_(0.5 + torch.rand(size, generator=generator))
            norm.bias.copy_(0.4 * (torch.rand(size, generator=generator) - 0.5))
    module.eval()
    return module
