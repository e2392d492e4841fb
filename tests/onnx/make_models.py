#!/usr/bin/python3
"""Write the ONNX test files of dse's ONNX importer (`dse eval --workload model.onnx`).

Usage:  /usr/bin/python3 tests/onnx/make_models.py OUTDIR [--big]

Needs only numpy and the `onnx` package (Debian's python3-onnx 1.12 is installed
for /usr/bin/python3; the pyenv `python3` on PATH has no onnx).  The bytes written
are deterministic: weights are np.zeros, constants, or draws from a fixed
np.random.RandomState.

Good models (each passes onnx.checker.check_model(full_check=True); the params
and MACs dse must report are in tests/onnx/expected.csv, derived by hand in
expectations() below and checked here against a walk of the written graph, whose
shapes are in turn checked against onnx's own shape inference):

  tiny_cnn.onnx      opset 13, fp32.  Conv+BN+Relu, MaxPool, a stride-2 Conv with
                     asymmetric pads [0,0,1,1], a depthwise Conv + Clip(0,6) with
                     min/max as inputs, GlobalAveragePool, Flatten, Gemm, Softmax.
                     Batch is the dim_param "batch".
  tiny_bert.onnx     opset 17, fp32.  A 2-layer BERT encoder (vocab 100, hidden 32,
                     2 heads, ffn 64, 64 positions) whose position ids and
                     attention reshapes come from Shape/Gather/Range/Unsqueeze/
                     Concat subgraphs that dse must constant-fold once "batch" and
                     "sequence" are bound.
  tiny_qcnn.onnx     opset 13.  QuantizeLinear -> QLinearConv x2 -> DequantizeLinear
                     -> GlobalAveragePool -> Flatten -> QuantizeLinear ->
                     QLinearMatMul -> DequantizeLinear (uint8 activations, int8
                     weights, int32 bias).
  ops_shapes.onnx    opset 13, fp32.  Shape inference of Conv auto_pad SAME_UPPER/VALID, Pad,
                     MaxPool ceil_mode, Resize, Slice (INT64_MAX end, negative start), Where,
                     TopK, Split (sizes as an input), a 7-input Concat, ReduceMean, Transpose,
                     Reshape [0,-1], Unsqueeze, Expand (broadcast shape), Squeeze and Gemm with a
                     [M, N] C; each output reaches a Conv or MatMul (1x1 "probe" Convs where the
                     main path drops a dimension).  Batch is the dim_param "batch" (valid at 1 only).
  ops_attention.onnx opset 13, fp32.  q, k, v [batch, 2, sequence, 8]: batched QK^T and PV
                     MatMuls, head merge (Transpose, Reshape [0,0,16]), MatMul [16,4], and a MatMul
                     with a broadcast weight [1, 2, 8, 3].
  ops_quant_qdq.onnx opset 13.  QDQ format: Q/DQ of the activations; int8 weights through
                     DequantizeLinear into a Conv (pads 1) and, after Flatten, a MatMul.
  mobilenet_v2.onnx  opset 13, fp32 zeros.  torchvision mobilenet_v2 (1.0, 224x224).
  resnet50.onnx      opset 13, fp16 zeros.  torchvision resnet50 (v1.5).
  bert_base_4l.onnx  opset 17, fp16 zeros.  BERT-base (HF BertModel with pooler)
                     cut to 4 layers; real embedding shapes (30522 x 768).

Written only with --big (performance files):

  big_100mb.onnx     resnet50.onnx with fp32 zeros (~102 MB).
  chain_50k.onnx     50,000 nodes: Add(x, c[64]) / Relu alternating, c shared.
  bert_base.onnx     opset 17, fp16 zeros.  Full 12-layer BERT-base (~219 MB).

Bad models (each with exactly one defect; the checker is not run on them; the
error dse should give is in tests/onnx/README.md):

  bad_truncated.onnx     tiny_cnn's bytes cut to half their length.
  bad_opset.onnx         tiny_cnn importing the default domain at version 99.
  bad_cycle.onnx         two Add nodes, each reading the other's output.
  bad_missing_init.onnx  tiny_cnn without the initializer conv1.weight (conv1 still
                         names it).
  bad_dim_overflow.onnx  a MatMul whose graph input x is [2^62, 64] (2^68 elements,
                         2^72 MACs: overflows 64 bits).
  bad_unknown_op.onnx    Conv then an op "FooBar" (domain "") named mystery_node.
  bad_not_onnx.onnx      64 random bytes (the first forced to 0x07: field 0, wire
                         type 7, which no protobuf parser accepts).
  bad_where2*.onnx, bad_topk_empty_k, bad_opset_{64bit,2e40,neg}, bad_reshape_nan,
  bad_split_many, bad_dup_input, bad_dim_zero*, bad_{gemm,add}_arity, bad_input0_omitted: issue 23's
                         shapes (bad_models_round3 says what each one breaks).

Counting rules (dse's; `count()` below implements them on the graph itself):
  params: elements of the weight initializers: Conv/ConvTranspose W and B,
    Gemm B and C, MatMul constant operands, embedding Gather data, LayerNorm scale
    and bias, BatchNormalization scale and bias (2*C; running mean and var are
    not params, as torchvision counts), QLinearConv w and int32 B, QLinearMatMul
    constant operand, and a non-scalar float initializer added to (Add) a tensor
    (a bias); an int8 weight read through DequantizeLinear counts once, with its
    own element count.  Not params: int64/int32 shape/axes/index initializers,
    scalar quantization scales and zero points, scalar float constants (Clip's
    min/max, the attention scale, GELU's 0.5/1/sqrt(2), Pad's and Where's 0),
    and Resize's roi and scales.  Each initializer is counted once however many
    nodes read it.
  MACs: Conv N*OC*OH*OW*(C/groups)*KH*KW; Gemm/MatMul M*N*K times the batch
    dimensions (attention QK^T and PV included, B*heads*S*S*head_dim each);
    bias adds, activations, pooling, softmax and norms are 0.
"""

import argparse
import csv
import math
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 8
PRODUCER = "dse tests/onnx/make_models.py"
HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------
# Hand-derived expectations.  Each value is written as the arithmetic that gives
# it; the big published ones are also asserted against the published figures.
# --------------------------------------------------------------------------

# tiny_cnn, batch 1, input 3x32x32:
#   conv1  3->8 k3 s1 p1, bias: out 32x32 (32+1+1-3)/1+1 = 32
#          params 8*3*3*3 + 8 = 216 + 8 = 224;  MACs 8*32*32*3*3*3 = 221,184
#   bn1    8 channels: params 2*8 = 16
#   pool   MaxPool k2 s2: 32 -> 16
#   conv2  8->16 k3 s2 pads [0,0,1,1]: out (16+0+1-3)//2+1 = 8, so 8x8
#          params 16*8*3*3 = 1,152;  MACs 16*8*8*8*3*3 = 73,728
#   dw     16->16 groups 16 k3 s1 p1, no bias: out 8x8
#          params 16*1*3*3 = 144;  MACs 16*8*8*1*3*3 = 9,216
#   Clip min/max: scalars, not params.  GlobalAveragePool -> [1,16,1,1], Flatten -> [1,16]
#   fc     Gemm transB=1, B [10,16], C [10]: params 160 + 10 = 170;  MACs 1*10*16 = 160
#   total  params 224+16+1152+144+170 = 1,706;  MACs 221184+73728+9216+160 = 304,288
TINY_CNN = (224 + 16 + 1152 + 144 + 170,
            8 * 32 * 32 * 3 * 9 + 16 * 8 * 8 * 8 * 9 + 16 * 8 * 8 * 1 * 9 + 10 * 16)

# tiny_bert, batch 1, sequence 16 (vocab 100, hidden 32, 2 heads x 16, ffn 64, 2 layers, 64 positions):
#   embeddings   word 100*32 = 3,200; position 64*32 = 2,048; LayerNorm 2*32 = 64  -> 5,312
#   per layer    q,k,v,o 4*(32*32 + 32) = 4*1,056 = 4,224
#                ffn (32*64 + 64) + (64*32 + 32) = 2,112 + 2,080 = 4,192
#                two LayerNorms 2*(2*32) = 128                               -> 8,544
#   params       5,312 + 2*8,544 = 22,400
#   MACs/layer   linear per token 4*32*32 + 2*32*64 = 4,096 + 4,096 = 8,192; x16 tokens = 131,072
#                QK^T 1*2*16*16*16 = 8,192; PV 8,192                          -> 147,456
#   MACs         2*147,456 = 294,912
TINY_BERT = (100 * 32 + 64 * 32 + 2 * 32 + 2 * (4 * (32 * 32 + 32) + (32 * 64 + 64) + (64 * 32 + 32) + 2 * 2 * 32),
             2 * (16 * (4 * 32 * 32 + 2 * 32 * 64) + 2 * (1 * 2 * 16 * 16 * 16)))

# tiny_qcnn, batch 1, input 3x16x16:
#   qconv1  int8 w [8,3,3,3] = 216, int32 bias [8] = 8;  MACs 8*16*16*3*3*3 = 55,296
#   qconv2  int8 w [8,8,1,1] = 64, no bias;               MACs 8*16*16*8*1*1 = 16,384
#   qmatmul int8 b [8,4] = 32;                            MACs 1*4*8 = 32
#   scales and zero points: not params
#   total   params 216+8+64+32 = 320;  MACs 55296+16384+32 = 71,712
TINY_QCNN = (216 + 8 + 64 + 32, 8 * 16 * 16 * 27 + 8 * 16 * 16 * 8 + 4 * 8)

# ops_shapes, batch 1, input x [1,3,20,20].  Each shape-only operator's output reaches a Conv or MatMul
# whose MACs depend on it: the main path ends in MatMul and Gemm, and the spatial operators whose H or W
# the path later loses (ReduceMean drops H, TopK fixes W) also feed a 1x1 "probe" Conv C->1 (weight
# [1,6,1,1], 6 params; MACs H*W*C) that is a graph output.  Shapes are [N,C,H,W] unless shown.
#   conv_same    Conv 3->4 k3 s2 auto_pad SAME_UPPER: out ceil(20/2) = 10; total pad (10-1)*2+3-20 = 1,
#                begin 0 end 1 (the odd one at the end) -> [1,4,10,10]
#                params 4*3*3*3 = 108;  MACs 4*10*10*3*3*3 = 10,800
#   conv_valid   Conv 4->6 k3 s1 auto_pad VALID: 10-3+1 = 8 -> [1,6,8,8]
#                params 6*4*3*3 = 216;  MACs 6*8*8*4*3*3 = 13,824
#   pad          constant 0, pads [0,0,1,2, 0,0,3,4] (all begins, then all ends): H 1+8+3 = 12,
#                W 2+8+4 = 14 -> [1,6,12,14];       probe_pad     MACs 12*14*6 = 1,008
#   maxpool      k3 s2 ceil_mode 1, no pads: H ceil((12-3)/2)+1 = 5+1 = 6, W ceil((14-3)/2)+1 = 6+1 = 7
#                -> [1,6,6,7] (floor would give 5x6; the last windows start at 10 < 12 and 12 < 14,
#                inside the input, so none is dropped); probe_maxpool MACs 6*7*6 = 252
#   resize       nearest, roi empty, scales [1,1,2,2]: floor(6*2) = 12, floor(7*2) = 14 -> [1,6,12,14]
#                                                    probe_resize  MACs 12*14*6 = 1,008
#   slice_w      starts [1] ends [INT64_MAX] axes [-1] steps [1]: W from 1 to min(2^63-1, 14) = 14 -> 13
#                -> [1,6,12,13];                    probe_slice_w MACs 12*13*6 = 936
#   slice_h      starts [-3] ends [1000] axes [2]: H from 12-3 = 9 to min(1000, 12) = 12 -> 3 -> [1,6,3,13]
#   less, where  Where(Less(x, 0), 0, x): broadcast of [1,6,3,13] (bool), [] and [1,6,3,13] -> [1,6,3,13]
#                (the shape comes from inputs 0 and 2, not from the scalar input 1)
#                                                    probe_where   MACs 3*13*6 = 234
#   topk         k [5] (an input), axis -1: values [1,6,3,5] feed on (indices unused)
#   split        axis 1, split [2,4] (an input): [1,2,3,5] and [1,4,3,5]
#   concat7      the parts a,b,a,b,a,b,a on axis 1: C 2+4+2+4+2+4+2 = 20 -> [1,20,3,5]
#   reduce_mean  axes [2] keepdims 0 -> [1,20,5]
#   transpose    perm [2,0,1] -> [5,1,20] (identity or the inverse perm [1,2,0] would give a K of 100 or 5)
#   reshape      [0,-1]: dim 0 copied (5), the rest 1*20 -> [5,20]
#   matmul       [5,20] @ W [20,1] -> [5,1];  params 20;  MACs 5*1*20 = 100
#   unsqueeze    axes [0] (an input) -> [1,5,1]
#   expand       shape [1,4]: numpy broadcast of [1,5,1] and [1,4] -> [1,5,4]
#   squeeze      axes [0] (an input) -> [5,4]
#   gemm         transB=1, B [7,4], C [5,7] (a full matrix, not a bias row) -> [5,7]
#                params 7*4 + 5*7 = 28 + 35 = 63;  MACs 5*7*4 = 140
#   not params   Resize's roi (float [0]) and scales (float [4]: read as sizes, not data); the scalars
#                (Pad's constant_value, the 0 of Less and Where); every int64 input (pads, starts, ends,
#                axes, steps, k, split, shapes)
#   total        params 108 + 216 + 5*6 + 20 + 63 = 437
#                MACs 10,800 + 13,824 + (1,008 + 252 + 1,008 + 936 + 234) + 100 + 140 = 28,302
OPS_SHAPES = (108 + 216 + 5 * 6 + 20 + 7 * 4 + 5 * 7,
              4 * 10 * 10 * 3 * 9 + 6 * 8 * 8 * 4 * 9 + (12 * 14 + 6 * 7 + 12 * 14 + 12 * 13 + 3 * 13) * 6
              + 5 * 1 * 20 + 5 * 7 * 4)

# ops_attention, batch 1, sequence 6 (q, k, v [1,2,6,8]: 2 heads of 8):
#   k_t          Transpose(k, perm [0,1,3,2]) -> [1,2,8,6]
#   scores       MatMul(q, k_t) -> [1,2,6,6]; batch 1*2: MACs 2*6*6*8 = 576
#   div, softmax Div by the scalar sqrt(8) (not a param), Softmax axis -1 -> [1,2,6,6]
#   context      MatMul(probs, v) -> [1,2,6,8]; MACs 2*6*8*6 = 576
#   merge        Transpose perm [0,2,1,3] -> [1,6,2,8]; Reshape [0,0,16] -> [1,6,16]
#   out_proj     MatMul W [16,4] -> [1,6,4]; params 16*4 = 64; MACs 6*4*16 = 384
#   head_proj    MatMul(context [1,2,6,8], W2 [1,2,8,3]): leading [1,2] and [1,2] -> [1,2,6,3]
#                (at batch B the 1 broadcasts: B*2 matrices); params 1*2*8*3 = 48; MACs 1*2*6*3*8 = 288
#   total        params 64 + 48 = 112;  MACs 576 + 576 + 384 + 288 = 1,824
OPS_ATTENTION = (16 * 4 + 1 * 2 * 8 * 3,
                 2 * 6 * 6 * 8 + 2 * 6 * 8 * 6 + 6 * 4 * 16 + 1 * 2 * 6 * 3 * 8)

# ops_attention_var, batch 1, sequence 6 (q, k [1,2,6,8], v4 [1,2,6,4], past pk, pv [1,2,4,8]):
#   chain A      MatMul(q, Transpose(k) [1,2,8,6]) -> [1,2,6,6]: MACs 2*6*6*8 = 576; Softmax;
#                MatMul(., v4) -> [1,2,6,4]: MACs 2*6*4*6 = 288 (V narrower than Q: dse keeps the MatMuls)
#   chain B      K = Concat(pk, k) and V = Concat(pv, k) on axis 2 -> [1,2,10,8]; MatMul(q, Transpose(K))
#                -> [1,2,6,10]: MACs 2*6*10*8 = 960; Mul by 0.35 (a scalar); Softmax; MatMul(., V) -> [1,2,6,8]:
#                MACs 2*6*8*10 = 960 (dse: one attention over 10 keys, 4 of them cached: the same 1,920)
#   total        params 0;  MACs 576 + 288 + 960 + 960 = 2,784
OPS_ATTENTION_VAR = (0, 2 * 6 * 6 * 8 + 2 * 6 * 4 * 6 + 2 * 6 * 10 * 8 + 2 * 6 * 8 * 10)

# ops_quant_qdq, batch 1 (static), input x [1,4,8,8]; QDQ format (per-tensor scale and zero point,
# all scalars: not params):
#   x            QuantizeLinear (uint8) -> DequantizeLinear -> [1,4,8,8] float
#   conv         W = DequantizeLinear(int8 [6,4,3,3]): a static weight, folded, 6*4*3*3 = 216 params
#                counted once; Conv k3 pads 1 -> [1,6,8,8]; MACs 6*8*8*4*3*3 = 13,824
#   conv out     QuantizeLinear -> DequantizeLinear (0 MACs)
#   flatten      axis 1 -> [1, 6*8*8] = [1,384]
#   matmul       [1,384] @ DequantizeLinear(int8 [384,5]) -> [1,5]; params 384*5 = 1,920; MACs 1*5*384 = 1,920
#   total        params 216 + 1,920 = 2,136;  MACs 13,824 + 1,920 = 15,744
OPS_QUANT_QDQ = (6 * 4 * 9 + 384 * 5, 6 * 8 * 8 * 4 * 9 + 1 * 5 * 384)

# Published figures.
MOBILENET_V2_PUBLISHED_PARAMS = 3504872     # torchvision MobileNet_V2_Weights meta num_params
MOBILENET_V2_MACS = 300774272              # mobilenet_v2_arith(); torchvision "_ops": 0.301 (GMACs)
RESNET50_PUBLISHED_PARAMS = 25557032        # torchvision ResNet50_Weights meta num_params
RESNET50_MACS = 4089184256                  # models/README.md; torchvision "_ops": 4.089 (GMACs)
BERT_BASE_PUBLISHED_PARAMS = 109482240      # KerasHub bert_base_en_uncased metadata 'params'


def mobilenet_v2_arith():
    """MobileNetV2 counts from its layer table alone (no graph), 224x224 input.

    Per conv, MACs = OH*OW*OC*(C/groups)*K*K, params = OC*(C/groups)*K*K + 2*OC (BN).
    A block is [expand 1x1 cin->hid at the input size] + depthwise 3x3 (stride s) + project 1x1,
    hid = t*cin; a 3x3 pad-1 conv maps H to (H+2-3)//s+1 = H/s.
      features.0  112*112*32*3*9 = 10,838,016 MACs;  32*3*9 + 2*32 = 928 params
      t1 c16 n1   112*112*32*9 + 112*112*16*32 = 10,035,200                    896
      t6 c24 n2   112*112*96*16 + 56*56*96*9 + 56*56*24*96 = 29,202,432
                  56*56*144*24 + 56*56*144*9 + 56*56*24*144 = 25,740,288
                  stage 54,942,720                                          13,968
      t6 c32 n3   56*56*144*24 + 28*28*144*9 + 28*28*32*144 = 15,466,752
                  2 x (28*28*192*32 + 28*28*192*9 + 28*28*32*192 = 10,988,544)
                  stage 37,443,840                                          39,696
      t6 c64 n4   28*28*192*32 + 14*14*192*9 + 14*14*64*192 = 7,564,032
                  3 x (14*14*384*64 + 14*14*384*9 + 14*14*64*384 = 10,311,168)
                  stage 38,497,536                                         183,872
      t6 c96 n3   14*14*384*64 + 14*14*384*9 + 14*14*96*384 = 12,719,616
                  2 x (14*14*576*96 + 14*14*576*9 + 14*14*96*576 = 22,692,096)
                  stage 58,103,808                                         303,168
      t6 c160 n3  14*14*576*96 + 7*7*576*9 + 7*7*160*576 = 15,607,872
                  2 x (7*7*960*160 + 7*7*960*9 + 7*7*160*960 = 15,476,160)
                  stage 46,560,192                                         795,264
      t6 c320 n1  7*7*960*160 + 7*7*960*9 + 7*7*320*960 = 23,002,560           473,920
      features.18 7*7*1280*320 = 20,070,400;  1280*320 + 2*1280 = 412,160 params
      classifier  1280*1000 = 1,280,000;  1280*1000 + 1000 = 1,281,000 params
      total       300,774,272 MACs (convs 299,494,272 + fc 1,280,000); 3,504,872 params
                  (torchvision: 3,504,872 params, "_ops" 0.301 GMACs; Sandler et al. CVPR 2018 ImageNet table: 300M MAdds)
    """
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    rows = []

    def cv(label, hw_out, cin, cout, k, groups=1):
        macs = hw_out * hw_out * cout * (cin // groups) * k * k
        params = cout * (cin // groups) * k * k + 2 * cout
        rows.append((label, macs, params))

    hw = 224 // 2
    cv("features.0", hw, 3, 32, 3)
    cin = 32
    for t, c, n, s in settings:
        for i in range(n):
            stride = s if i == 0 else 1
            hid = cin * t
            label = "t%d c%d" % (t, c)
            if t != 1:
                cv(label, hw, cin, hid, 1)
            hw = hw // stride                     # 3x3 pad 1: (hw+2-3)//s+1 = hw/s for even hw
            cv(label, hw, hid, hid, 3, groups=hid)
            cv(label, hw, hid, c, 1)
            cin = c
    cv("features.18", hw, 320, 1280, 1)
    rows.append(("classifier", 1280 * 1000, 1280 * 1000 + 1000))
    return sum(r[2] for r in rows), sum(r[1] for r in rows), rows


def resnet50_arith():
    """ResNet-50 v1.5 counts from its layer table alone, 224x224 input.

    Per conv, MACs = OH*OW*OC*C*K*K, params = OC*C*K*K + 2*OC (BN).  Block = conv1 1x1 (at the
    input size) + conv2 3x3 (stride s) + conv3 1x1 (x4) [+ downsample 1x1 stride s on block 0].
      stem   conv1 7x7 3->64 s2 p3: (224+6-7)//2+1 = 112: 112*112*64*3*49 = 118,013,952;  9,536 params
             MaxPool k3 s2 p1: (112+2-3)//2+1 = 56
      layer1 block 0: 56*56*64*64 + 56*56*64*64*9 + 56*56*256*64 + 56*56*256*64
                      = 12,845,056 + 115,605,504 + 51,380,224 + 51,380,224 = 231,211,008
             blocks 1-2: 2 x (56*56*64*256 + 56*56*64*64*9 + 56*56*256*64 = 218,365,952)
             stage 667,942,912 MACs; 215,808 params
      layer2 block 0: 56*56*128*256 + 28*28*128*128*9 + 28*28*512*128 + 28*28*512*256
                      = 102,760,448 + 115,605,504 + 51,380,224 + 102,760,448 = 372,506,624
             blocks 1-3: 3 x (28*28*128*512 + 28*28*128*128*9 + 28*28*512*128 = 218,365,952)
             stage 1,027,604,480 MACs; 1,219,584 params
      layer3 block 0: 28*28*256*512 + 14*14*256*256*9 + 14*14*1024*256 + 14*14*1024*512
                      = 102,760,448 + 115,605,504 + 51,380,224 + 102,760,448 = 372,506,624
             blocks 1-5: 5 x (14*14*256*1024 + 14*14*256*256*9 + 14*14*1024*256 = 218,365,952)
             stage 1,464,336,384 MACs; 7,098,368 params
      layer4 block 0: 14*14*512*1024 + 7*7*512*512*9 + 7*7*2048*512 + 7*7*2048*1024
                      = 102,760,448 + 115,605,504 + 51,380,224 + 102,760,448 = 372,506,624
             blocks 1-2: 2 x (7*7*512*2048 + 7*7*512*512*9 + 7*7*2048*512 = 218,365,952)
             stage 809,238,528 MACs; 14,964,736 params
      fc     2048*1000 = 2,048,000 MACs; 2,049,000 params
      total  4,089,184,256 MACs; 25,557,032 params (torchvision: 25,557,032 and "_ops" 4.089)
    """
    rows = []

    def cv(label, hw_out, cin, cout, k):
        rows.append((label, hw_out * hw_out * cout * cin * k * k, cout * cin * k * k + 2 * cout))

    cv("stem", 112, 3, 64, 7)
    hw, cin = 56, 64                              # MaxPool k3 s2 p1: (112+2-3)//2+1 = 56
    for li, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]):
        label = "layer%d" % (li + 1)
        for b in range(blocks):
            s = stride if b == 0 else 1
            cv(label, hw, cin, width, 1)          # conv1 1x1 at the input resolution
            hw_out = hw // s
            cv(label, hw_out, width, width, 3)    # conv2 3x3 carries the stride (v1.5)
            cv(label, hw_out, width, width * 4, 1)
            if b == 0:
                cv(label, hw_out, cin, width * 4, 1)   # downsample 1x1 stride s + BN
            hw, cin = hw_out, width * 4
    rows.append(("fc", 2048 * 1000, 2048 * 1000 + 1000))
    return sum(r[2] for r in rows), sum(r[1] for r in rows), rows


def bert_arith(layers, seq, vocab=30522, hidden=768, heads=12, ffn=3072, max_pos=512, type_vocab=2, pooler=True):
    """BERT counts in closed form, batch 1.

    BERT-base (vocab 30522, hidden 768, 12 heads x 64, ffn 3072, 512 positions, 2 types):
      embeddings  30522*768 + 512*768 + 2*768 + 2*768 = 23,440,896 + 393,216 + 1,536 + 1,536 = 23,837,184
      per layer   4*(768*768 + 768) = 2,362,368; (768*3072 + 3072) + (3072*768 + 768) = 4,722,432;
                  2 LayerNorms 3,072                                          -> 7,087,872
      pooler      768*768 + 768 = 590,592
      12 layers   23,837,184 + 12*7,087,872 + 590,592 = 109,482,240 (the published figure)
      4 layers    23,837,184 +  4*7,087,872 + 590,592 =  52,779,264
    MACs at sequence 128:
      per layer   linear 128*(4*768*768 + 2*768*3072) = 128*7,077,888 = 905,969,664
                  QK^T + PV 2*(12*128*128*64) = 2*12,582,912 = 25,165,824  -> 931,135,488
      pooler      1*768*768 = 589,824
      12 layers   12*931,135,488 + 589,824 = 11,174,215,680
      4 layers     4*931,135,488 + 589,824 =  3,725,131,776
    """
    hd = hidden // heads
    emb = vocab * hidden + max_pos * hidden + (type_vocab * hidden if type_vocab else 0) + 2 * hidden
    layer = 4 * (hidden * hidden + hidden) + (hidden * ffn + ffn) + (ffn * hidden + hidden) + 2 * 2 * hidden
    params = emb + layers * layer + ((hidden * hidden + hidden) if pooler else 0)
    layer_macs = seq * (4 * hidden * hidden + 2 * hidden * ffn) + 2 * (heads * seq * seq * hd)
    macs = layers * layer_macs + (hidden * hidden if pooler else 0)
    return params, macs


def expectations():
    """file -> (params, macs, note).  Notes avoid commas (expected.csv stays a plain CSV)."""
    mp, mm, _ = mobilenet_v2_arith()
    rp, rm, _ = resnet50_arith()
    b4p, b4m = bert_arith(4, 128)
    b12p, b12m = bert_arith(12, 128)
    tb = bert_arith(2, 16, vocab=100, hidden=32, heads=2, ffn=64, max_pos=64, type_vocab=0, pooler=False)
    assert tb == TINY_BERT, (tb, TINY_BERT)
    assert (mp, mm) == (MOBILENET_V2_PUBLISHED_PARAMS, MOBILENET_V2_MACS), (mp, mm)
    assert (rp, rm) == (RESNET50_PUBLISHED_PARAMS, RESNET50_MACS), (rp, rm)
    assert b12p == BERT_BASE_PUBLISHED_PARAMS, b12p
    return {
        "tiny_cnn.onnx": TINY_CNN + ("batch 1",),
        "tiny_cnn_external.onnx": TINY_CNN + ("batch 1; weights as external data (never read)",),
        "bert_base_external.onnx": (b12p, b12m, "batch 1 sequence 128; all 12 layers; weights as external data"),
        "tiny_bert.onnx": TINY_BERT + ("batch 1 sequence 16",),
        "tiny_qcnn.onnx": TINY_QCNN + ("batch 1 (static)",),
        "ops_shapes.onnx": OPS_SHAPES + ("batch 1",),
        "ops_attention.onnx": OPS_ATTENTION + ("batch 1 sequence 6",),
        "ops_quant_qdq.onnx": OPS_QUANT_QDQ + ("batch 1 (static)",),
        "ops_attention_var.onnx": OPS_ATTENTION_VAR + ("batch 1 sequence 6",),
        "mobilenet_v2.onnx": (mp, mm, "batch 1"),
        "resnet50.onnx": (rp, rm, "batch 1"),
        "bert_base_4l.onnx": (b4p, b4m, "batch 1 sequence 128"),
        "big_100mb.onnx": (rp, rm, "batch 1; --big only"),
        "chain_50k.onnx": (64, 0, "batch 1 (static); --big only"),
        "bert_base.onnx": (b12p, b12m, "batch 1 sequence 128; --big only"),
    }


# Binding dse is asked to evaluate each good file at (dim_param -> value).
BINDINGS = {
    "tiny_bert.onnx": {"batch": 1, "sequence": 16},
    "ops_attention.onnx": {"batch": 1, "sequence": 6},
    "ops_attention_var.onnx": {"batch": 1, "sequence": 6},
    "bert_base_4l.onnx": {"batch": 1, "sequence": 128},
    "bert_base.onnx": {"batch": 1, "sequence": 128},
}


# --------------------------------------------------------------------------
# Graph builder
# --------------------------------------------------------------------------

def onnx_type(dtype):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


class Graph:
    """Collects nodes, initializers, inputs and outputs; names stay unique.

    weight() draws float weights from a fixed RandomState (random=True) or
    writes np.zeros (random=False, for the large models)."""

    def __init__(self, name, dtype=np.float32, seed=0, random=True):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.rng = np.random.RandomState(seed)
        self.random = random
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.init_names, self.node_names = set(), set()

    def unique(self, base):
        name, i = base, 1
        while name in self.node_names:
            i += 1
            name = "%s_%d" % (base, i)
        self.node_names.add(name)
        return name

    def init(self, name, array):
        """Add an initializer once; a second request for the same name reuses it."""
        if name not in self.init_names:
            self.init_names.add(name)
            self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, shape, fill=None):
        if fill is not None:
            a = np.full(shape, fill, self.dtype)
        elif self.random:
            a = (self.rng.standard_normal(shape) * 0.1).astype(self.dtype)
        else:
            a = np.zeros(shape, self.dtype)
        return self.init(name, a)

    def scalar(self, name, value, dtype=None):
        """A rank-0 constant (not a param)."""
        return self.init(name, np.array(value, dtype or self.dtype))

    def ints(self, name, values):
        """An int64 constant: a scalar for an int, else 1-D (shapes, axes)."""
        return self.init(name, np.array(values, np.int64))

    def op(self, op_type, inputs, name, **attrs):
        name = self.unique(name)
        out = name + "_out"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out

    def op_n(self, op_type, inputs, name, n_out, **attrs):
        """A node with n_out outputs (Split, TopK): NAME_out, NAME_out_1, ...; returns their names."""
        name = self.unique(name)
        outs = [name + "_out"] + ["%s_out_%d" % (name, i) for i in range(1, n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, **attrs))
        return outs

    def input(self, name, dtype, dims):
        self.inputs.append(helper.make_tensor_value_info(name, onnx_type(dtype), dims))
        return name

    def output(self, tensor, name, dtype, dims):
        """Rename node output `tensor` to `name` and make it a graph output; returns `name`."""
        for n in self.nodes:
            for lst in (n.input, n.output):
                for i, t in enumerate(lst):
                    if t == tensor:
                        lst[i] = name
        self.outputs.append(helper.make_tensor_value_info(name, onnx_type(dtype), dims))
        return name

    def model(self, opset=13, doc=""):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                 ir_version=IR_VERSION, producer_name=PRODUCER,
                                 producer_version="1", doc_string=doc)


# ---- CNN pieces -----------------------------------------------------------

def conv(g, x, cin, cout, k, stride=1, pads=None, groups=1, bias=False, name="conv", auto_pad=None):
    """Conv with weight [cout, cin/groups, k, k]; pads default to k//2 on each side.  With auto_pad
    (SAME_UPPER, SAME_LOWER, VALID) no pads attribute is written."""
    if pads is None:
        pads = [k // 2] * 4
    ins = [x, g.weight(name + ".weight", [cout, cin // groups, k, k])]
    if bias:
        ins.append(g.weight(name + ".bias", [cout]))
    pad_attr = {"auto_pad": auto_pad} if auto_pad else {"pads": pads}
    return g.op("Conv", ins, name, kernel_shape=[k, k], strides=[stride, stride],
                group=groups, dilations=[1, 1], **pad_attr)


def batchnorm(g, x, c, name):
    """BatchNormalization: scale, bias (params, 2*C), running mean and var (not params)."""
    ins = [x, g.weight(name + ".weight", [c], fill=1.0), g.weight(name + ".bias", [c], fill=0.0),
           g.weight(name + ".running_mean", [c], fill=0.0), g.weight(name + ".running_var", [c], fill=1.0)]
    return g.op("BatchNormalization", ins, name, epsilon=1e-5, momentum=0.9)


def relu(g, x, name):
    return g.op("Relu", [x], name)


def relu6(g, x, name):
    """ReLU6 as Clip with min 0 and max 6 given as (shared, scalar) inputs."""
    return g.op("Clip", [x, g.scalar("relu6_min", 0.0), g.scalar("relu6_max", 6.0)], name)


def conv_bn_act(g, x, cin, cout, k, stride=1, groups=1, act=relu, name="conv"):
    """torchvision's Conv2dNormActivation: Conv (no bias) named NAME.0, BN NAME.1, act NAME.2."""
    y = conv(g, x, cin, cout, k, stride, groups=groups, name=name + ".0")
    y = batchnorm(g, y, cout, name + ".1")
    return act(g, y, name + ".2") if act else y


def gemm(g, x, din, dout, name):
    """torch Linear on a 2-D input as exported: Gemm(transB=1), B [dout, din], C [dout]."""
    return g.op("Gemm", [x, g.weight(name + ".weight", [dout, din]), g.weight(name + ".bias", [dout])],
                name, alpha=1.0, beta=1.0, transB=1)


def classifier_head(g, x, cin, classes, name, dropout=False):
    """GlobalAveragePool + Flatten [+ Dropout] + Gemm."""
    y = g.op("GlobalAveragePool", [x], "avgpool")
    y = g.op("Flatten", [y], "flatten", axis=1)
    if dropout:
        y = g.op("Dropout", [y], name + ".0")
        name = name + ".1"
    return gemm(g, y, cin, classes, name)


# ---- transformer pieces ---------------------------------------------------

def linear(g, x, din, dout, name):
    """torch Linear on a 3-D input as exported: MatMul(x, W [din, dout]) + Add(bias [dout])."""
    y = g.op("MatMul", [x, g.weight(name + ".weight", [din, dout])], name + ".MatMul")
    return g.op("Add", [y, g.weight(name + ".bias", [dout])], name + ".Add")


def layer_norm(g, x, d, name):
    return g.op("LayerNormalization", [x, g.weight(name + ".weight", [d], fill=1.0),
                                       g.weight(name + ".bias", [d], fill=0.0)],
                name, axis=-1, epsilon=1e-12)


def gelu(g, x, name):
    """GELU as exported by torch: x * 0.5 * (1 + erf(x / sqrt(2))): Div, Erf, Add, Mul, Mul."""
    y = g.op("Div", [x, g.scalar("gelu_sqrt2", math.sqrt(2.0))], name + ".Div")
    y = g.op("Erf", [y], name + ".Erf")
    y = g.op("Add", [y, g.scalar("gelu_one", 1.0)], name + ".Add")
    y = g.op("Mul", [x, y], name + ".Mul")
    return g.op("Mul", [y, g.scalar("gelu_half", 0.5)], name + ".Mul_1")


def shape_dim(g, shape, i, name):
    """Shape(...)[i] as a 1-element int64 tensor: Gather(index i) -> Unsqueeze(axes [0])."""
    d = g.op("Gather", [shape, g.ints("const_i64_%d" % i, i)], name + ".Gather", axis=0)
    return g.op("Unsqueeze", [d, g.ints("axes_0", [0])], name + ".Unsqueeze")


def encoder_layer(g, x, hidden, heads, ffn, p):
    """One BERT layer (post-LN), attention written out as MatMuls."""
    hd = hidden // heads
    # [B, S, heads, hd] computed from x's shape: Shape -> Gather(0), Gather(1) -> Unsqueeze -> Concat.
    shp = g.op("Shape", [x], p + ".attention.self.Shape")
    b = shape_dim(g, shp, 0, p + ".attention.self.batch")
    s = shape_dim(g, shp, 1, p + ".attention.self.seq")
    split = g.op("Concat", [b, s, g.ints("heads_x_head_dim", [heads, hd])], p + ".attention.self.Concat", axis=0)

    def heads_of(t, perm, name):
        t = g.op("Reshape", [t, split], name + ".Reshape")
        return g.op("Transpose", [t], name + ".Transpose", perm=perm)

    a = p + ".attention.self"
    q = heads_of(linear(g, x, hidden, hidden, a + ".query"), [0, 2, 1, 3], a + ".q")   # [B,h,S,hd]
    k = heads_of(linear(g, x, hidden, hidden, a + ".key"), [0, 2, 3, 1], a + ".k")     # [B,h,hd,S]
    v = heads_of(linear(g, x, hidden, hidden, a + ".value"), [0, 2, 1, 3], a + ".v")   # [B,h,S,hd]
    sc = g.op("MatMul", [q, k], a + ".scores")                                          # [B,h,S,S]
    sc = g.op("Div", [sc, g.scalar("attention_scale", math.sqrt(hd))], a + ".Div")
    pr = g.op("Softmax", [sc], a + ".Softmax", axis=-1)
    ctx = g.op("MatMul", [pr, v], a + ".context")                                       # [B,h,S,hd]
    ctx = g.op("Transpose", [ctx], a + ".context.Transpose", perm=[0, 2, 1, 3])         # [B,S,h,hd]
    ctx = g.op("Reshape", [ctx, g.ints("shape_0_0_hidden", [0, 0, hidden])], a + ".context.Reshape")
    y = linear(g, ctx, hidden, hidden, p + ".attention.output.dense")
    y = g.op("Add", [y, x], p + ".attention.output.residual")
    y = layer_norm(g, y, hidden, p + ".attention.output.LayerNorm")
    h = gelu(g, linear(g, y, hidden, ffn, p + ".intermediate.dense"), p + ".intermediate.gelu")
    z = linear(g, h, ffn, hidden, p + ".output.dense")
    z = g.op("Add", [z, y], p + ".output.residual")
    return layer_norm(g, z, hidden, p + ".output.LayerNorm")


def bert(name, dtype, random, vocab, hidden, layers, heads, ffn, max_pos, type_vocab, pooler, seed=0):
    """HF BertModel as exported: embeddings (+ LayerNorm), `layers` encoder layers, optional pooler."""
    g = Graph(name, dtype, seed=seed, random=random)
    ids = g.input("input_ids", np.int64, ["batch", "sequence"])
    e = g.op("Gather", [g.weight("embeddings.word_embeddings.weight", [vocab, hidden]), ids],
             "embeddings.word_embeddings", axis=0)
    if type_vocab:
        tt = g.input("token_type_ids", np.int64, ["batch", "sequence"])
        t = g.op("Gather", [g.weight("embeddings.token_type_embeddings.weight", [type_vocab, hidden]), tt],
                 "embeddings.token_type_embeddings", axis=0)
        e = g.op("Add", [e, t], "embeddings.add_token_type")
    # position ids [1, S] = Unsqueeze(Range(0, Shape(input_ids)[1], 1), axes [0])
    shp = g.op("Shape", [ids], "embeddings.position_ids.Shape")
    seq = g.op("Gather", [shp, g.ints("const_i64_1", 1)], "embeddings.position_ids.Gather", axis=0)
    rng = g.op("Range", [g.ints("const_i64_0", 0), seq, g.ints("const_i64_1", 1)], "embeddings.position_ids.Range")
    pos_ids = g.op("Unsqueeze", [rng, g.ints("axes_0", [0])], "embeddings.position_ids")
    pos = g.op("Gather", [g.weight("embeddings.position_embeddings.weight", [max_pos, hidden]), pos_ids],
               "embeddings.position_embeddings", axis=0)
    e = g.op("Add", [e, pos], "embeddings.add_position")
    x = layer_norm(g, e, hidden, "embeddings.LayerNorm")
    for i in range(layers):
        x = encoder_layer(g, x, hidden, heads, ffn, "encoder.layer.%d" % i)
    x = g.output(x, "last_hidden_state", dtype, ["batch", "sequence", hidden])
    if pooler:
        first = g.op("Gather", [x, g.ints("const_i64_0", 0)], "pooler.first_token", axis=1)   # [B, hidden]
        y = g.op("Tanh", [gemm(g, first, hidden, hidden, "pooler.dense")], "pooler.activation")
        g.output(y, "pooler_output", dtype, ["batch", hidden])
    return g


# --------------------------------------------------------------------------
# The models
# --------------------------------------------------------------------------

def tiny_cnn():
    g = Graph("tiny_cnn", np.float32, seed=1)
    x = g.input("x", np.float32, ["batch", 3, 32, 32])
    y = conv(g, x, 3, 8, 3, 1, pads=[1, 1, 1, 1], bias=True, name="conv1")
    y = relu(g, batchnorm(g, y, 8, "bn1"), "relu1")
    y = g.op("MaxPool", [y], "pool1", kernel_shape=[2, 2], strides=[2, 2])
    y = conv(g, y, 8, 16, 3, 2, pads=[0, 0, 1, 1], name="conv2")          # top,left 0; bottom,right 1
    y = relu(g, y, "relu2")
    y = conv(g, y, 16, 16, 3, 1, pads=[1, 1, 1, 1], groups=16, name="dwconv")
    y = relu6(g, y, "clip")
    y = classifier_head(g, y, 16, 10, "fc")
    y = g.op("Softmax", [y], "softmax", axis=-1)
    g.output(y, "probs", np.float32, ["batch", 10])
    return g.model(13, "tiny_cnn: small CNN covering Conv (bias, asymmetric pads, depthwise), BN, "
                       "MaxPool, Clip, GlobalAveragePool, Flatten, Gemm, Softmax")


def tiny_bert():
    g = bert("tiny_bert", np.float32, True, vocab=100, hidden=32, layers=2, heads=2, ffn=64,
             max_pos=64, type_vocab=0, pooler=False, seed=2)
    return g.model(17, "tiny_bert: 2-layer BERT encoder with shape subgraphs to constant-fold")


def tiny_qcnn():
    g = Graph("tiny_qcnn", np.float32, seed=3)
    r = g.rng
    x = g.input("x", np.float32, [1, 3, 16, 16])

    def qparams(name, scale, zp_dtype, zp=0):
        return g.scalar(name + "_scale", scale, np.float32), g.scalar(name + "_zero_point", zp, zp_dtype)

    xs, xz = qparams("x", 0.02, np.uint8, 128)
    xq = g.op("QuantizeLinear", [x, xs, xz], "quant_x")
    w1 = g.init("conv1.weight_quantized", r.randint(-127, 128, [8, 3, 3, 3]).astype(np.int8))
    w1s, w1z = qparams("conv1.weight", 0.01, np.int8)
    y1s, y1z = qparams("conv1.y", 0.05, np.uint8, 0)
    b1 = g.init("conv1.bias_quantized", r.randint(-1000, 1000, [8]).astype(np.int32))
    y = g.op("QLinearConv", [xq, xs, xz, w1, w1s, w1z, y1s, y1z, b1], "qconv1",
             kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    w2 = g.init("conv2.weight_quantized", r.randint(-127, 128, [8, 8, 1, 1]).astype(np.int8))
    w2s, w2z = qparams("conv2.weight", 0.01, np.int8)
    y2s, y2z = qparams("conv2.y", 0.05, np.uint8, 0)
    y = g.op("QLinearConv", [y, y1s, y1z, w2, w2s, w2z, y2s, y2z], "qconv2", kernel_shape=[1, 1])   # no bias
    y = g.op("DequantizeLinear", [y, y2s, y2z], "dequant_conv")
    y = g.op("GlobalAveragePool", [y], "avgpool")
    y = g.op("Flatten", [y], "flatten", axis=1)
    fs, fz = qparams("fc.x", 0.05, np.uint8, 0)
    y = g.op("QuantizeLinear", [y, fs, fz], "quant_fc")
    w3 = g.init("fc.weight_quantized", r.randint(-127, 128, [8, 4]).astype(np.int8))
    w3s, w3z = qparams("fc.weight", 0.01, np.int8)
    ys, yz = qparams("fc.y", 0.1, np.uint8, 128)
    y = g.op("QLinearMatMul", [y, fs, fz, w3, w3s, w3z, ys, yz], "qmatmul")
    y = g.op("DequantizeLinear", [y, ys, yz], "dequant_fc")
    g.output(y, "y", np.float32, [1, 4])
    return g.model(13, "tiny_qcnn: QDQ/QLinear quantized CNN (uint8 activations, int8 weights, int32 bias)")


def probe(g, x, c, name, dims):
    """A 1x1 Conv C->1 on x (weight [1, c, 1, 1]: c params; MACs N*H*W*C) written as a graph output,
    so that x's shape shows in the MACs even where the main path drops a dimension."""
    y = conv(g, x, c, 1, 1, name=name)
    return g.output(y, name + "_y", np.float32, dims)


INT64_MAX = 2 ** 63 - 1


def ops_shapes():
    """Shape-changing operators, each feeding a MAC count (the arithmetic is above OPS_SHAPES)."""
    g = Graph("ops_shapes", np.float32, seed=7)
    x = g.input("x", np.float32, ["batch", 3, 20, 20])
    y = conv(g, x, 3, 4, 3, 2, auto_pad="SAME_UPPER", name="conv_same")           # [1,4,10,10]
    y = conv(g, y, 4, 6, 3, 1, auto_pad="VALID", name="conv_valid")               # [1,6,8,8]
    y = g.op("Pad", [y, g.ints("pad_pads", [0, 0, 1, 2, 0, 0, 3, 4]), g.scalar("pad_value", 0.0)],
             "pad", mode="constant")                                               # [1,6,12,14]
    probe(g, y, 6, "probe_pad", ["batch", 1, 12, 14])
    y = g.op("MaxPool", [y], "maxpool", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)   # [1,6,6,7]
    probe(g, y, 6, "probe_maxpool", ["batch", 1, 6, 7])
    roi = g.init("resize_roi", np.zeros([0], np.float32))                          # empty roi
    scales = g.init("resize_scales", np.array([1, 1, 2, 2], np.float32))
    y = g.op("Resize", [y, roi, scales], "resize", mode="nearest")                 # [1,6,12,14]
    probe(g, y, 6, "probe_resize", ["batch", 1, 12, 14])
    y = g.op("Slice", [y, g.ints("slice_w_starts", [1]), g.ints("slice_w_ends", [INT64_MAX]),
                       g.ints("slice_w_axes", [-1]), g.ints("slice_w_steps", [1])], "slice_w")   # [1,6,12,13]
    probe(g, y, 6, "probe_slice_w", ["batch", 1, 12, 13])
    y = g.op("Slice", [y, g.ints("slice_h_starts", [-3]), g.ints("slice_h_ends", [1000]),
                       g.ints("slice_h_axes", [2])], "slice_h")                      # [1,6,3,13]
    zero = g.scalar("zero", 0.0)
    neg = g.op("Less", [y, zero], "less")                                          # bool [1,6,3,13]
    y = g.op("Where", [neg, zero, y], "where")                                     # [1,6,3,13]
    probe(g, y, 6, "probe_where", ["batch", 1, 3, 13])
    y, _ = g.op_n("TopK", [y, g.ints("topk_k", [5])], "topk", 2, axis=-1)          # values [1,6,3,5]
    a, b = g.op_n("Split", [y, g.ints("split_sizes", [2, 4])], "split", 2, axis=1)   # [1,2,3,5], [1,4,3,5]
    y = g.op("Concat", [a, b, a, b, a, b, a], "concat7", axis=1)                   # [1,20,3,5]
    y = g.op("ReduceMean", [y], "reduce_mean", axes=[2], keepdims=0)               # [1,20,5]
    y = g.op("Transpose", [y], "transpose", perm=[2, 0, 1])                        # [5,1,20]
    y = g.op("Reshape", [y, g.ints("reshape_0_m1", [0, -1])], "reshape")           # [5,20]
    y = g.op("MatMul", [y, g.weight("matmul.weight", [20, 1])], "matmul")          # [5,1]
    y = g.op("Unsqueeze", [y, g.ints("axes_0", [0])], "unsqueeze")                 # [1,5,1]
    y = g.op("Expand", [y, g.ints("expand_shape", [1, 4])], "expand")              # [1,5,4]
    y = g.op("Squeeze", [y, g.ints("axes_0", [0])], "squeeze")                     # [5,4]
    y = g.op("Gemm", [y, g.weight("gemm.weight", [7, 4]), g.weight("gemm.c", [5, 7])], "gemm",
             alpha=1.0, beta=1.0, transB=1)                                        # [5,7]
    g.output(y, "y", np.float32, [5, 7])
    return g.model(13, "ops_shapes: auto_pad, Pad, ceil_mode MaxPool, Resize, Slice, Where, TopK, Split, "
                       "Concat, ReduceMean, Transpose, Reshape, Unsqueeze, Expand, Squeeze, Gemm; each "
                       "output's shape reaches a Conv or MatMul")


def ops_attention():
    """Batched attention MatMuls and a MatMul with a broadcast [1, 2, 8, 3] weight."""
    g = Graph("ops_attention", np.float32, seed=8)
    dims = ["batch", 2, "sequence", 8]
    q, k, v = (g.input(t, np.float32, dims) for t in ("q", "k", "v"))
    kt = g.op("Transpose", [k], "k_t", perm=[0, 1, 3, 2])                          # [B,2,8,S]
    sc = g.op("MatMul", [q, kt], "scores")                                         # [B,2,S,S]
    sc = g.op("Div", [sc, g.scalar("attention_scale", math.sqrt(8))], "scale")
    pr = g.op("Softmax", [sc], "softmax", axis=-1)
    ctx = g.op("MatMul", [pr, v], "context")                                       # [B,2,S,8]
    y = g.op("Transpose", [ctx], "merge.Transpose", perm=[0, 2, 1, 3])             # [B,S,2,8]
    y = g.op("Reshape", [y, g.ints("shape_0_0_16", [0, 0, 16])], "merge.Reshape")  # [B,S,16]
    y = g.op("MatMul", [y, g.weight("out_proj.weight", [16, 4])], "out_proj")      # [B,S,4]
    g.output(y, "y", np.float32, ["batch", "sequence", 4])
    z = g.op("MatMul", [ctx, g.weight("head_proj.weight", [1, 2, 8, 3])], "head_proj")   # [B,2,S,3]
    g.output(z, "z", np.float32, ["batch", 2, "sequence", 3])
    return g.model(13, "ops_attention: batched MatMuls (QK^T, PV) and a MatMul with a broadcast weight")


def ops_attention_var():
    """Two attention patterns dse treats differently: V narrower than Q (kept as MatMuls) and keys
    longer than the queries (past keys concatenated: one attention with a cache)."""
    g = Graph("ops_attention_var", np.float32, seed=9)
    q, k = (g.input(t, np.float32, ["batch", 2, "sequence", 8]) for t in ("q", "k"))
    v4 = g.input("v4", np.float32, ["batch", 2, "sequence", 4])
    pk, pv = (g.input(t, np.float32, ["batch", 2, 4, 8]) for t in ("past_k", "past_v"))
    sa = g.op("MatMul", [q, g.op("Transpose", [k], "a.k_t", perm=[0, 1, 3, 2])], "a.scores")   # [B,2,S,S]
    ya = g.op("MatMul", [g.op("Softmax", [sa], "a.softmax", axis=-1), v4], "a.context")      # [B,2,S,4]
    g.output(ya, "ya", np.float32, ["batch", 2, "sequence", 4])
    kk = g.op("Concat", [pk, k], "b.keys", axis=2)                                             # [B,2,S+4,8]
    vv = g.op("Concat", [pv, k], "b.values", axis=2)
    sb = g.op("MatMul", [q, g.op("Transpose", [kk], "b.k_t", perm=[0, 1, 3, 2])], "b.scores")  # [B,2,S,S+4]
    sb = g.op("Mul", [sb, g.scalar("b.scale", 0.35)], "b.scale_mul")
    yb = g.op("MatMul", [g.op("Softmax", [sb], "b.softmax", axis=-1), vv], "b.context")       # [B,2,S,8]
    g.output(yb, "yb", np.float32, ["batch", 2, "sequence", 8])
    return g.model(13, "ops_attention_var: attention with a narrower V and with cached keys")


def ops_quant_qdq():
    """QDQ format: Q/DQ on activations, int8 weights through DequantizeLinear into Conv and MatMul."""
    g = Graph("ops_quant_qdq", np.float32, seed=9)
    r = g.rng
    x = g.input("x", np.float32, [1, 4, 8, 8])

    def qdq(t, name, scale, zp):
        s, z = g.scalar(name + "_scale", scale, np.float32), g.scalar(name + "_zero_point", zp, np.uint8)
        return g.op("DequantizeLinear", [g.op("QuantizeLinear", [t, s, z], name + ".quant"), s, z],
                    name + ".dequant")

    def dq_weight(name, shape):
        w = g.init(name + "_quantized", r.randint(-127, 128, shape).astype(np.int8))
        return g.op("DequantizeLinear", [w, g.scalar(name + "_scale", 0.01, np.float32),
                                         g.scalar(name + "_zero_point", 0, np.int8)], name + ".dequant")

    y = qdq(x, "x", 0.02, 128)
    y = g.op("Conv", [y, dq_weight("conv.weight", [6, 4, 3, 3])], "conv", kernel_shape=[3, 3],
             pads=[1, 1, 1, 1], strides=[1, 1])                                    # [1,6,8,8]
    y = qdq(y, "conv.y", 0.05, 128)
    y = g.op("Flatten", [y], "flatten", axis=1)                                    # [1,384]
    y = g.op("MatMul", [y, dq_weight("fc.weight", [384, 5])], "fc")                # [1,5]
    g.output(y, "y", np.float32, [1, 5])
    return g.model(13, "ops_quant_qdq: QDQ-format model (Q/DQ activations, DequantizeLinear'd int8 weights)")


def mobilenet_v2(dtype=np.float32):
    """torchvision mobilenet_v2(): features.0 .. features.18, classifier (Dropout, Linear)."""
    g = Graph("mobilenet_v2", dtype, random=False)
    x = g.input("input", dtype, ["batch", 3, 224, 224])
    y = conv_bn_act(g, x, 3, 32, 3, 2, act=relu6, name="features.0")
    cin, idx = 32, 1
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hid, p, j, block_in = cin * t, "features.%d.conv" % idx, 0, y
            if t != 1:                                    # pointwise expansion
                y = conv_bn_act(g, y, cin, hid, 1, act=relu6, name="%s.%d" % (p, j))
                j += 1
            y = conv_bn_act(g, y, hid, hid, 3, stride, groups=hid, act=relu6, name="%s.%d" % (p, j))   # depthwise
            y = conv(g, y, hid, c, 1, name="%s.%d" % (p, j + 1))                  # pointwise linear
            y = batchnorm(g, y, c, "%s.%d" % (p, j + 2))
            if stride == 1 and cin == c:
                y = g.op("Add", [block_in, y], "features.%d.add" % idx)
            cin, idx = c, idx + 1
    y = conv_bn_act(g, y, 320, 1280, 1, act=relu6, name="features.18")
    y = classifier_head(g, y, 1280, 1000, "classifier", dropout=True)
    g.output(y, "logits", dtype, ["batch", 1000])
    return g.model(13, "mobilenet_v2: torchvision MobileNetV2 1.0 at 224x224 (zero weights)")


def resnet50(dtype=np.float16, name="resnet50"):
    """torchvision resnet50() (v1.5: stride on the 3x3 conv of each bottleneck)."""
    g = Graph(name, dtype, random=False)
    x = g.input("input", dtype, ["batch", 3, 224, 224])
    y = conv(g, x, 3, 64, 7, 2, pads=[3, 3, 3, 3], name="conv1")
    y = relu(g, batchnorm(g, y, 64, "bn1"), "relu")
    y = g.op("MaxPool", [y], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for li, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]):
        for b in range(blocks):
            p, s, block_in = "layer%d.%d" % (li + 1, b), (stride if b == 0 else 1), y
            y = relu(g, batchnorm(g, conv(g, y, cin, width, 1, name=p + ".conv1"), width, p + ".bn1"), p + ".relu1")
            y = relu(g, batchnorm(g, conv(g, y, width, width, 3, s, name=p + ".conv2"), width, p + ".bn2"), p + ".relu2")
            y = batchnorm(g, conv(g, y, width, width * 4, 1, name=p + ".conv3"), width * 4, p + ".bn3")
            if b == 0:                                     # projection shortcut
                block_in = conv(g, block_in, cin, width * 4, 1, s, name=p + ".downsample.0")
                block_in = batchnorm(g, block_in, width * 4, p + ".downsample.1")
            y = relu(g, g.op("Add", [y, block_in], p + ".add"), p + ".relu3")
            cin = width * 4
    y = classifier_head(g, y, 2048, 1000, "fc")
    g.output(y, "logits", dtype, ["batch", 1000])
    return g.model(13, "%s: torchvision ResNet-50 v1.5 at 224x224 (zero %s weights)" % (name, np.dtype(dtype).name))


def bert_base(layers, name):
    g = bert(name, np.float16, False, vocab=30522, hidden=768, layers=layers, heads=12, ffn=3072,
             max_pos=512, type_vocab=2, pooler=True)
    return g.model(17, "%s: BERT-base uncased (HF BertModel with pooler), %d layers, zero fp16 weights"
                   % (name, layers))


def chain_50k():
    """50,000 nodes: 25,000 x (Add(x, c) then Relu), all Adds sharing one c [64]."""
    x, c = "x", "c"
    nodes = []
    for i in range(25000):
        y = "y" if i == 24999 else "relu_%d_out" % i          # the last Relu writes the graph output
        nodes.append(helper.make_node("Add", [x, c], ["add_%d_out" % i], name="add_%d" % i))
        nodes.append(helper.make_node("Relu", ["add_%d_out" % i], [y], name="relu_%d" % i))
        x = y
    c_init = numpy_helper.from_array(np.random.RandomState(4).standard_normal(64).astype(np.float32), c)
    graph = helper.make_graph(nodes, "chain_50k",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [c_init])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=IR_VERSION,
                             producer_name=PRODUCER, producer_version="1",
                             doc_string="chain_50k: 50,000-node Add/Relu chain (parser and pass scaling)")


# ---- bad models -------------------------------------------------------------

def external_data_copy(model, location):
    """A copy of model whose initializers of 1024 bytes or more (onnx.save_model's default
    size_threshold: shape constants stay inline) name external data (location, offset, length) instead
    of holding it; the data file itself is not written."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    offset = 0
    for t in m.graph.initializer:
        raw = numpy_helper.to_array(t).tobytes()
        if len(raw) < 1024:
            continue
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(len(raw)))):
            e = t.external_data.add()
            e.key, e.value = k, v
        offset += len(raw)
    return m


def bad_models(tiny_cnn_model):
    """name -> bytes, each with exactly one defect."""
    good = tiny_cnn_model.SerializeToString()
    out = {"bad_truncated.onnx": good[:len(good) // 2]}

    m = onnx.ModelProto()
    m.CopyFrom(tiny_cnn_model)
    m.opset_import[0].version = 99
    out["bad_opset.onnx"] = m.SerializeToString()

    nodes = [helper.make_node("Add", ["x", "add_b_out"], ["add_a_out"], name="add_a"),
             helper.make_node("Add", ["add_a_out", "x"], ["add_b_out"], name="add_b")]
    graph = helper.make_graph(nodes, "bad_cycle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("add_b_out", TensorProto.FLOAT, [1, 4])])
    out["bad_cycle.onnx"] = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                              ir_version=IR_VERSION, producer_name=PRODUCER).SerializeToString()

    m = onnx.ModelProto()
    m.CopyFrom(tiny_cnn_model)
    keep = [t for t in m.graph.initializer if t.name != "conv1.weight"]
    assert len(keep) == len(m.graph.initializer) - 1
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    out["bad_missing_init.onnx"] = m.SerializeToString()

    w = numpy_helper.from_array(np.zeros([64, 16], np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="overflow_matmul")], "bad_dim_overflow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2 ** 62, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2 ** 62, 16])], [w])
    out["bad_dim_overflow.onnx"] = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                                     ir_version=IR_VERSION, producer_name=PRODUCER).SerializeToString()

    g = Graph("bad_unknown_op", np.float32, seed=5)
    x = g.input("x", np.float32, [1, 3, 8, 8])
    y = conv(g, x, 3, 4, 3, 1, name="conv")
    nm = g.unique("mystery_node")
    g.nodes.append(helper.make_node("FooBar", [y], ["y"], name=nm, domain=""))
    g.outputs.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8]))
    out["bad_unknown_op.onnx"] = g.model(13).SerializeToString()

    nodes = [helper.make_node("Relu", ["x"], [""], name="no_output_relu")]   # its only output omitted
    graph = helper.make_graph(nodes, "bad_no_output", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])])
    out["bad_no_output.onnx"] = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                                  ir_version=IR_VERSION, producer_name=PRODUCER).SerializeToString()

    m = onnx.ModelProto()       # an initializer whose raw_data is 4 bytes short of its dims
    m.CopyFrom(tiny_cnn_model)
    t = [t for t in m.graph.initializer if t.name == "conv1.weight"][0]
    t.raw_data = numpy_helper.to_array(t).tobytes()[:-4]
    out["bad_raw_size.onnx"] = m.SerializeToString()

    out.update(bad_models_round3(tiny_cnn_model))

    junk = bytearray(np.random.RandomState(6).bytes(64))
    junk[0] = 0x07          # tag byte: field number 0, wire type 7: invalid for every protobuf parser
    out["bad_not_onnx.onnx"] = bytes(junk)

    for name in ("bad_truncated.onnx", "bad_not_onnx.onnx"):
        try:
            onnx.ModelProto().ParseFromString(out[name])
        except Exception:
            pass
        else:
            raise AssertionError(name + " parses")
    return out


def _small(name, nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=IR_VERSION,
                             producer_name=PRODUCER).SerializeToString()


def bad_models_round3(tiny_cnn_model):
    """Issue 23 items 2, 14 and 17: shapes that crashed dse or were read wrongly, one defect each."""
    f4 = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])]
    y4 = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])]
    out = {}
    # Where with two inputs, both constants (SIGSEGV in h_ew before: the third input read unchecked)
    cond = numpy_helper.from_array(np.array([True, False, True, False]), "cond")
    a = numpy_helper.from_array(np.ones([4], np.float32), "a")
    out["bad_where2_const.onnx"] = _small("bad_where2_const", [
        helper.make_node("Where", ["cond", "a"], ["w"], name="where2"),
        helper.make_node("Add", ["x", "w"], ["y"], name="add")], f4, y4, [cond, a])
    # Where(cond, x) with two data inputs (accepted before)
    out["bad_where2.onnx"] = _small("bad_where2", [
        helper.make_node("Where", ["c", "x"], ["y"], name="where2")],
        [helper.make_tensor_value_info("c", TensorProto.BOOL, [1, 4])] + f4, y4)
    # TopK whose k is an empty constant (uninitialised memory read before)
    k = numpy_helper.from_array(np.zeros([0], np.int64), "k")
    out["bad_topk_empty_k.onnx"] = _small("bad_topk_empty_k", [
        helper.make_node("TopK", ["x", "k"], ["y", "i"], name="topk")], f4,
        y4 + [helper.make_tensor_value_info("i", TensorProto.INT64, [1, 4])], [k])
    # opsets past 32 bits: -4294967279 (read as 17 before), 2^40 (reported as 1000), -1 ("none imported")
    for name, ver in (("bad_opset_64bit.onnx", -4294967279), ("bad_opset_2e40.onnx", 2 ** 40),
                      ("bad_opset_neg.onnx", -1)):
        m = onnx.ModelProto()
        m.CopyFrom(tiny_cnn_model)
        m.opset_import[0].version = ver
        out[name] = m.SerializeToString()
    # a FLOAT Reshape shape [NaN, 4] (read as [0, 4] before)
    shape = numpy_helper.from_array(np.array([np.nan, 4], np.float32), "shape")
    out["bad_reshape_nan.onnx"] = _small("bad_reshape_nan", [
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], f4, y4, [shape])
    # Split of an axis of 2 into 4 outputs (opset 18 num_outputs; empty outputs before)
    out["bad_split_many.onnx"] = _small("bad_split_many", [
        helper.make_node("Split", ["x"], ["s0", "s1", "s2", "s3"], name="split", axis=1, num_outputs=4)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("s%d" % i, TensorProto.FLOAT, None) for i in range(4)], opset=18)
    # a graph input listed twice with different shapes (the second ignored before)
    out["bad_dup_input.onnx"] = _small("bad_dup_input", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                       f4 + [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 4])], y4)
    # a literal leading dim_value 0 (taken as the batch dimension before)
    out["bad_dim_zero.onnx"] = _small("bad_dim_zero", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 4])], y4)
    # a literal dim_value 0 inside (reported as "dynamic and unnamed" before)
    out["bad_dim_zero_inner.onnx"] = _small("bad_dim_zero_inner", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 0])], y4)
    # Gemm with one input, Conv with four (the arity table)
    out["bad_gemm_arity.onnx"] = _small("bad_gemm_arity", [helper.make_node("Gemm", ["x"], ["y"], name="gemm1")],
                                        f4, y4)
    # DequantizeLinear whose first input is omitted ("")
    sc = numpy_helper.from_array(np.array(0.5, np.float32), "scale")
    out["bad_input0_omitted.onnx"] = _small("bad_input0_omitted", [
        helper.make_node("DequantizeLinear", ["", "scale"], ["d"], name="dq"),
        helper.make_node("Add", ["x", "d"], ["y"], name="add")], f4, y4, [sc])
    # Add with three inputs
    out["bad_add_arity.onnx"] = _small("bad_add_arity", [helper.make_node("Add", ["x", "x", "x"], ["y"], name="add3")],
                                       f4, y4)
    return out


# --------------------------------------------------------------------------
# Independent count: walk the written graph with dse's rules
# --------------------------------------------------------------------------

# Which inputs of an op are weights when they are initializers.
WEIGHT_INPUTS = {"Conv": (1, 2), "ConvTranspose": (1, 2), "Gemm": (0, 1, 2), "MatMul": (0, 1),
                 "Gather": (0,), "LayerNormalization": (1, 2), "BatchNormalization": (1, 2),
                 "QLinearConv": (3, 8), "QLinearMatMul": (0, 3),
                 "DequantizeLinear": (0,)}      # an int8 weight dequantized before use: counted once, here
ELEMENTWISE = {"Relu", "Clip", "Softmax", "Erf", "Tanh", "Dropout", "Identity", "BatchNormalization",
               "LayerNormalization", "QuantizeLinear", "DequantizeLinear"}
BROADCAST = {"Add", "Sub", "Mul", "Div"}
COMPARE = {"Less", "Greater", "Equal"}          # broadcast, bool out; never params


def _conv_out(h, k, s, p0, p1, d=1, ceil=False):
    span = h + p0 + p1 - d * (k - 1) - 1
    return (-(-span // s) if ceil else span // s) + 1


def _window(a, x, ks):
    """Output spatial dims of a Conv/MaxPool on x [N, C, *sp] with kernel ks: pads, auto_pad
    (SAME_*: out ceil(in/stride), total pad (out-1)*stride + k - in; VALID: no pads) and ceil_mode."""
    sp = len(x) - 2
    st = a.get("strides", [1] * sp)
    pads = a.get("pads", [0] * (2 * sp))
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    out = []
    for i in range(sp):
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-x[2 + i] // st[i])
            total = max((o - 1) * st[i] + ks[i] - x[2 + i], 0)
            p0 = total // 2 if auto == "SAME_UPPER" else total - total // 2
            p1 = total - p0
        elif auto == "VALID":
            p0 = p1 = 0
        else:
            p0, p1 = pads[i], pads[i + sp]
        o = _conv_out(x[2 + i], ks[i], st[i], p0, p1, ceil=bool(a.get("ceil_mode", 0)))
        if a.get("ceil_mode", 0) and (o - 1) * st[i] >= x[2 + i] + p0:
            o -= 1                              # a last window starting in the end padding is dropped
        out.append(o)
    return tuple(out)


def _slice_len(d, start, end, step):
    """ONNX Slice on a dimension of size d: negative starts/ends count from the end, then clamp."""
    start = start + d if start < 0 else start
    end = end + d if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), d), min(max(end, 0), d)
    else:
        start, end = min(max(start, 0), d - 1), min(max(end, -1), d - 1)
    return max(0, -(-(end - start) // step))


def count(model, bind, shapes=None):
    """(params, macs) of `model` with dim_params bound by `bind`; folds the int64 shape subgraphs.
    The shape of every tensor is left in the dict `shapes` when one is given."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    shape, value = {}, {}
    for t in g.initializer:
        shape[t.name] = tuple(t.dims)
        if t.data_type in (TensorProto.INT64, TensorProto.INT32):
            value[t.name] = numpy_helper.to_array(t)
    for i in g.input:
        shape[i.name] = tuple(d.dim_value if d.HasField("dim_value") else bind[d.dim_param]
                              for d in i.type.tensor_type.shape.dim)
    counted, params, macs = set(), 0, 0
    for n in g.node:
        a = {at.name: helper.get_attribute_value(at) for at in n.attribute}
        ins = list(n.input)
        # params
        idx = WEIGHT_INPUTS.get(n.op_type, (0, 1) if n.op_type in BROADCAST else ())
        for j in idx:
            if j < len(ins) and ins[j] in inits and ins[j] not in counted:
                t = inits[ins[j]]
                if t.data_type in (TensorProto.INT64,) or (n.op_type in BROADCAST and len(t.dims) == 0):
                    continue
                if n.op_type == "Gather" and t.data_type not in (TensorProto.FLOAT, TensorProto.FLOAT16):
                    continue
                counted.add(ins[j])
                params += int(np.prod(t.dims, dtype=np.int64))
        # shapes and MACs
        s0 = shape[ins[0]] if ins else None
        op = n.op_type
        if op in ("Conv", "QLinearConv"):
            x, w = s0, shape[ins[1] if op == "Conv" else ins[3]]
            grp = a.get("group", 1)
            assert w[1] * grp == x[1], (n.name, x, w)
            oh, ow = _window(a, x, w[2:])
            out = (x[0], w[0], oh, ow)
            macs += x[0] * w[0] * oh * ow * w[1] * w[2] * w[3]
        elif op == "MaxPool":
            out = s0[:2] + _window(a, s0, a["kernel_shape"])
        elif op in ELEMENTWISE:
            out = s0
        elif op in BROADCAST or op in COMPARE or op == "Where":
            out = tuple(np.broadcast_shapes(*(shape[i] for i in ins)))
        elif op == "Pad":
            p = [int(v) for v in value[ins[1]]]
            out = tuple(d + p[i] + p[i + len(s0)] for i, d in enumerate(s0))
        elif op == "Resize":
            assert len(ins) == 3 and a.get("coordinate_transformation_mode", b"") != b"tf_crop_and_resize", n.name
            sc = numpy_helper.to_array(inits[ins[2]])
            out = tuple(int(math.floor(d * float(f))) for d, f in zip(s0, sc))
        elif op == "Slice":
            st, en = value[ins[1]], value[ins[2]]
            axes = value[ins[3]] if len(ins) > 3 and ins[3] else range(len(st))
            steps = value[ins[4]] if len(ins) > 4 and ins[4] else [1] * len(st)
            out = list(s0)
            for b_, e_, ax, sp in zip(st, en, axes, steps):
                ax = int(ax) % len(s0)
                out[ax] = _slice_len(s0[ax], int(b_), int(e_), int(sp))
            out = tuple(out)
        elif op == "Split":
            ax = a.get("axis", 0) % len(s0)
            sizes = [int(v) for v in value[ins[1]]]
            assert sum(sizes) == s0[ax] and len(sizes) == len(n.output), n.name
            out = [s0[:ax] + (sz,) + s0[ax + 1:] for sz in sizes]
        elif op == "TopK":
            ax = a.get("axis", -1) % len(s0)
            kk = int(value[ins[1]].reshape(-1)[0])
            out = s0[:ax] + (kk,) + s0[ax + 1:]
            out = [out, out]
        elif op == "ReduceMean":
            axes = [v % len(s0) for v in a.get("axes", range(len(s0)))]
            keep = a.get("keepdims", 1)
            out = tuple((1 if i in axes else d) for i, d in enumerate(s0) if keep or i not in axes)
        elif op == "Expand":
            out = tuple(np.broadcast_shapes(s0, tuple(int(v) for v in value[ins[1]])))
        elif op == "Squeeze":
            axes = [int(v) % len(s0) for v in value[ins[1]]]
            assert all(s0[i] == 1 for i in axes), n.name
            out = tuple(d for i, d in enumerate(s0) if i not in axes)
        elif op == "GlobalAveragePool":
            out = s0[:2] + (1,) * (len(s0) - 2)
        elif op == "Flatten":
            ax = a.get("axis", 1)
            out = (int(np.prod(s0[:ax])), int(np.prod(s0[ax:])))
        elif op == "Gemm":
            (m, k), b = (s0[::-1] if a.get("transA") else s0), shape[ins[1]]
            kb, nn = b[::-1] if a.get("transB") else b
            assert k == kb, n.name
            out = (m, nn)
            assert len(ins) < 3 or np.broadcast_shapes(shape[ins[2]], out) == out, (n.name, shape[ins[2]], out)
            macs += m * nn * k
        elif op in ("MatMul", "QLinearMatMul"):
            x, y = s0, shape[ins[1] if op == "MatMul" else ins[3]]
            assert x[-1] == y[-2], (n.name, x, y)
            batch = tuple(np.broadcast_shapes(x[:-2], y[:-2]))
            out = batch + (x[-2], y[-1])
            macs += int(np.prod(batch, dtype=np.int64)) * x[-2] * y[-1] * x[-1]
        elif op == "Gather":
            ax = a.get("axis", 0) % len(s0)
            out = s0[:ax] + shape[ins[1]] + s0[ax + 1:]
            if ins[0] in value and ins[1] in value:
                value[n.output[0]] = np.take(value[ins[0]], value[ins[1]], axis=ax)
        elif op == "Shape":
            value[n.output[0]] = np.array(s0, np.int64)
            out = (len(s0),)
        elif op == "Range":
            st, lim, de = (int(value[i]) for i in ins)
            value[n.output[0]] = np.arange(st, lim, de, dtype=np.int64)
            out = (len(value[n.output[0]]),)
        elif op == "Unsqueeze":
            out = list(s0)
            for ax in sorted(int(v) for v in value[ins[1]]):
                out.insert(ax, 1)
            out = tuple(out)
            if ins[0] in value:
                value[n.output[0]] = value[ins[0]].reshape(out)
        elif op == "Concat":
            ax = a["axis"]
            out = list(s0)
            out[ax] = sum(shape[i][ax] for i in ins)
            out = tuple(out)
            if all(i in value for i in ins):
                value[n.output[0]] = np.concatenate([value[i] for i in ins], axis=ax)
        elif op == "Reshape":
            tgt = [int(v) for v in value[ins[1]]]
            tgt = [s0[i] if v == 0 else v for i, v in enumerate(tgt)]
            if -1 in tgt:
                tgt[tgt.index(-1)] = int(np.prod(s0)) // -int(np.prod(tgt))
            assert np.prod(tgt) == np.prod(s0), (n.name, s0, tgt)
            out = tuple(tgt)
        elif op == "Transpose":
            out = tuple(s0[p] for p in a["perm"])
        else:
            raise ValueError("count(): no rule for %s (%s)" % (op, n.name))
        for o, sh in zip(n.output, out if isinstance(out, list) else [out]):
            shape[o] = tuple(int(d) for d in sh)
    if shapes is not None:
        shapes.update(shape)
    return params, macs


def check_inferred_shapes(model, bind, shapes):
    """onnx's own shape inference must agree with count()'s walk: the rank of every tensor it gives a
    shape, and each dim that is a number or a dim_param bound in `bind` (others, unk__N, are skipped).
    Returns how many tensors were compared."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph
    checked = 0
    for vi in list(inferred.value_info) + list(inferred.output):
        if vi.name not in shapes or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        got = [d.dim_value if d.HasField("dim_value") else bind.get(d.dim_param) for d in dims]
        want = shapes[vi.name]
        assert len(got) == len(want) and all(g_ in (None, w_) for g_, w_ in zip(got, want)), (
            model.graph.name, vi.name, got, want)
        checked += 1
    return checked


# --------------------------------------------------------------------------

def read_expected_csv():
    path = os.path.join(HERE, "expected.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return {r["file"]: (int(r["params"]), int(r["macs"]), r["note"]) for r in csv.DictReader(f)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--big", action="store_true", help="also write big_100mb, chain_50k and bert_base")
    ap.add_argument("--print-arith", action="store_true", help="print the MobileNetV2/ResNet-50 layer arithmetic")
    args = ap.parse_args()
    t0 = time.time()
    os.makedirs(args.outdir, exist_ok=True)
    exp = expectations()
    table = read_expected_csv()

    if args.print_arith:
        for label, fn in (("mobilenet_v2", mobilenet_v2_arith), ("resnet50", resnet50_arith)):
            p, m, rows = fn()
            sub = {}
            for r in rows:
                sub.setdefault(r[0], [0, 0])
                sub[r[0]][0] += r[1]
                sub[r[0]][1] += r[2]
            for k, (mm, pp) in sub.items():
                print("  %-12s %-12s macs %15s params %12s" % (label, k, "{:,}".format(mm), "{:,}".format(pp)))
            print("  %-12s %-12s macs %15s params %12s" % (label, "TOTAL", "{:,}".format(m), "{:,}".format(p)))

    good = [("tiny_cnn.onnx", tiny_cnn), ("tiny_bert.onnx", tiny_bert), ("tiny_qcnn.onnx", tiny_qcnn),
            ("ops_shapes.onnx", ops_shapes), ("ops_attention.onnx", ops_attention),
            ("ops_quant_qdq.onnx", ops_quant_qdq), ("ops_attention_var.onnx", ops_attention_var),
            ("mobilenet_v2.onnx", mobilenet_v2), ("resnet50.onnx", resnet50),
            ("bert_base_4l.onnx", lambda: bert_base(4, "bert_base_4l"))]
    if args.big:
        good += [("big_100mb.onnx", lambda: resnet50(np.float32, "big_100mb")),
                 ("chain_50k.onnx", chain_50k), ("bert_base.onnx", lambda: bert_base(12, "bert_base"))]

    tiny = None
    for fname, build in good:
        model = build()
        if fname == "tiny_cnn.onnx":
            tiny = model
        data = model.SerializeToString()
        onnx.checker.check_model(data, full_check=True)          # checker + strict shape inference
        bind, shapes = BINDINGS.get(fname, {"batch": 1}), {}
        params, macs = count(model, bind, shapes)
        inferred = check_inferred_shapes(model, bind, shapes)
        want = exp[fname]
        assert (params, macs) == want[:2], (fname, (params, macs), want)
        if table is not None:
            assert fname in table and table[fname][:2] == want[:2], (fname, table.get(fname), want)
        with open(os.path.join(args.outdir, fname), "wb") as f:
            f.write(data)
        print("%-22s %11d bytes  %6d nodes  params %13s  macs %17s  shapes %4d  (%s)" % (
            fname, len(data), len(model.graph.node), "{:,}".format(params), "{:,}".format(macs), inferred,
            want[2]))
        del model, data

    # tiny_cnn with every initializer moved to external data in a file that is not written: the dims
    # are all dse needs, so the counts are tiny_cnn's
    ext = external_data_copy(tiny, "tiny_cnn_external.bin")
    data = ext.SerializeToString()
    assert exp["tiny_cnn_external.onnx"][:2] == exp["tiny_cnn.onnx"][:2]
    if table is not None:
        assert table["tiny_cnn_external.onnx"][:2] == exp["tiny_cnn.onnx"][:2]
    with open(os.path.join(args.outdir, "tiny_cnn_external.onnx"), "wb") as f:
        f.write(data)
    print("%-22s %11d bytes  (tiny_cnn, external data)" % ("tiny_cnn_external.onnx", len(data)))

    # the whole BERT-base (12 layers: the published 109,482,240) as a small file: its weights external
    bb = bert_base(12, "bert_base_external")
    bp, bm = count(bb, BINDINGS["bert_base.onnx"], {})
    assert (bp, bm) == exp["bert_base_external.onnx"][:2], (bp, bm)
    if table is not None:
        assert table["bert_base_external.onnx"][:2] == exp["bert_base_external.onnx"][:2]
    data = external_data_copy(bb, "bert_base_external.bin").SerializeToString()
    del bb
    with open(os.path.join(args.outdir, "bert_base_external.onnx"), "wb") as f:
        f.write(data)
    print("%-22s %11d bytes  (bert_base, 12 layers, external data)" % ("bert_base_external.onnx", len(data)))

    for fname, data in bad_models(tiny).items():
        with open(os.path.join(args.outdir, fname), "wb") as f:
            f.write(data)
        print("%-22s %11d bytes  (bad)" % (fname, len(data)))
    if table is None:
        print("note: %s/expected.csv not found; not compared" % HERE)
    print("done in %.1f s" % (time.time() - t0))


if __name__ == "__main__":
    sys.exit(main())
