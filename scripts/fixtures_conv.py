#!/usr/bin/python3
"""PyTorch fixtures for Conv2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d and Flatten.

Called by make_fixtures.py's main (conv_cases); the files and tensor names are those of its
layer fixtures: input, output, grad_output, input.grad, and for Conv2d weight, bias,
weight.grad, bias.grad. Options in the metadata use PyTorch's keyword names; every size is
a [h, w] pair (kernel_size, stride, padding, dilation, output_size), so the C++ tests read
one form.
"""

import torch
import torch.nn as nn

from make_fixtures import Case, forward_backward, module_case


def pair(v):
    return list(v) if isinstance(v, (tuple, list)) else [v, v]


def conv_case(out, name, c_in, c_out, kernel, shape, stride=1, padding=0, dilation=1, groups=1, bias=True):
    options = dict(in_channels=c_in, out_channels=c_out, kernel_size=pair(kernel), stride=pair(stride),
                   padding=pair(padding), dilation=pair(dilation), groups=groups, bias=bias)
    make = lambda: nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=padding, dilation=dilation,
                             groups=groups, bias=bias)
    module_case(out, name, "Conv2d", options, make, shape, randomize=False)


def conv2d_cases(out):
    conv_case(out, "conv2d_3x3", 3, 4, 3, (2, 3, 7, 7))
    conv_case(out, "conv2d_no_bias", 3, 4, 3, (2, 3, 6, 5), bias=False)
    conv_case(out, "conv2d_stride2_pad1", 3, 5, 3, (2, 3, 8, 8), stride=2, padding=1)
    conv_case(out, "conv2d_rect", 2, 3, (3, 5), (2, 2, 7, 9), stride=(2, 1), padding=(1, 2))
    conv_case(out, "conv2d_dilation2", 2, 3, 3, (2, 2, 9, 8), dilation=2, padding=1)
    conv_case(out, "conv2d_groups2", 4, 6, 3, (2, 4, 6, 6), groups=2, padding=1)
    conv_case(out, "conv2d_depthwise", 3, 6, 3, (2, 3, 7, 5), groups=3, padding=1)
    conv_case(out, "conv2d_stride_gt_kernel", 2, 3, 2, (3, 2, 9, 11), stride=3)
    conv_case(out, "conv2d_1x1", 5, 4, 1, (2, 5, 3, 4))
    conv_case(out, "conv2d_unbatched", 3, 4, 3, (3, 6, 5), padding=1)
    conv_case(out, "conv2d_batch1_odd", 1, 2, 3, (1, 1, 5, 7), stride=2)
    conv_case(out, "conv2d_combined", 4, 6, (2, 3), (2, 4, 9, 7), stride=(3, 2), padding=(1, 1),
              dilation=(2, 1), groups=2, bias=False)
    conv_case(out, "conv2d_padding_covers_kernel", 2, 2, 3, (2, 2, 1, 1), padding=1)
    # The digits CNN's three shapes at a small batch.
    conv_case(out, "conv2d_digits1", 1, 16, 3, (4, 1, 8, 8), padding=1)
    conv_case(out, "conv2d_digits2", 16, 32, 3, (4, 16, 8, 8), stride=2, padding=1)
    # 8 channels, output 16x17: minidl's rule takes Winograd F(2x2, 3x3), partial tiles included.
    conv_case(out, "conv2d_winograd_rule", 8, 8, 3, (1, 8, 16, 17), padding=1)


def max_pool_case(out, name, kernel, shape, stride=None, padding=0, dilation=1):
    options = dict(kernel_size=pair(kernel), stride=pair(kernel if stride is None else stride),
                   padding=pair(padding), dilation=pair(dilation))
    module_case(out, name, "MaxPool2d", options,
                lambda: nn.MaxPool2d(kernel, stride=stride, padding=padding, dilation=dilation), shape,
                randomize=False)


def avg_pool_case(out, name, kernel, shape, stride=None, padding=0, count_include_pad=True):
    options = dict(kernel_size=pair(kernel), stride=pair(kernel if stride is None else stride),
                   padding=pair(padding), count_include_pad=count_include_pad)
    module_case(out, name, "AvgPool2d", options,
                lambda: nn.AvgPool2d(kernel, stride=stride, padding=padding, count_include_pad=count_include_pad),
                shape, randomize=False)


def pool_cases(out):
    max_pool_case(out, "maxpool2d_2", 2, (2, 3, 6, 6))
    max_pool_case(out, "maxpool2d_3_s2_p1", 3, (2, 2, 7, 7), stride=2, padding=1)
    max_pool_case(out, "maxpool2d_rect", (2, 3), (2, 2, 7, 8), stride=(1, 2), padding=(1, 1))
    max_pool_case(out, "maxpool2d_stride_gt_kernel", 2, (2, 2, 9, 10), stride=3)
    max_pool_case(out, "maxpool2d_dilation2", 2, (2, 2, 7, 7), stride=1, dilation=2, padding=1)
    max_pool_case(out, "maxpool2d_unbatched", 2, (3, 5, 5))
    # Ties (small integers): the first maximum of each window gets the gradient.
    options = dict(kernel_size=[2, 2], stride=[1, 1], padding=[0, 0], dilation=[1, 1])
    case = Case(out, "maxpool2d_ties", "MaxPool2d", options)
    forward_backward(case, "", nn.MaxPool2d(2, stride=1), torch.randint(0, 3, (2, 2, 5, 5)).float(), {})
    case.write()
    avg_pool_case(out, "avgpool2d_2", 2, (2, 3, 6, 6))
    avg_pool_case(out, "avgpool2d_3_s2_p1", 3, (2, 2, 7, 7), stride=2, padding=1)
    avg_pool_case(out, "avgpool2d_3_s2_p1_exclude_pad", 3, (2, 2, 7, 7), stride=2, padding=1,
                  count_include_pad=False)
    avg_pool_case(out, "avgpool2d_rect", (3, 2), (2, 2, 7, 5), stride=(2, 1), padding=(1, 0))
    avg_pool_case(out, "avgpool2d_stride_gt_kernel", 2, (2, 2, 9, 10), stride=3)
    avg_pool_case(out, "avgpool2d_unbatched", 3, (2, 5, 5), stride=1, padding=1, count_include_pad=False)
    for name, size, shape in [("adaptive_avgpool2d_1", (1, 1), (2, 3, 5, 5)),
                              ("adaptive_avgpool2d_3x2", (3, 2), (2, 3, 7, 5)),
                              ("adaptive_avgpool2d_upsample", (3, 3), (2, 2, 2, 2)),
                              ("adaptive_avgpool2d_unbatched", (2, 4), (3, 5, 9))]:
        module_case(out, name, "AdaptiveAvgPool2d", dict(output_size=list(size)),
                    lambda: nn.AdaptiveAvgPool2d(size), shape, randomize=False)
    for name, start, end, shape in [("flatten_default", 1, -1, (2, 3, 4, 5)), ("flatten_0_1", 0, 1, (2, 3, 4)),
                                    ("flatten_middle", 1, 2, (2, 3, 4, 5))]:
        module_case(out, name, "Flatten", dict(start_dim=start, end_dim=end), lambda: nn.Flatten(start, end),
                    shape, randomize=False)


def conv_cases(out):
    conv2d_cases(out)
    pool_cases(out)
