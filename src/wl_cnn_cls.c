/* wl_cnn_cls.c -- classification backbones beyond wl_cnn.c's first two, as deployed (batch
 * normalisation folded into each convolution's bias: wl_build.h, gb_conv). */
#include <stdio.h>
#include <string.h>

#include "wl_cnn_gen.h"

const struct wl_cnn_gen wl_cnn_cls_gens[] = {
    {NULL, NULL, NULL},
};
