/* wl_yolo.c -- single-stage detectors, as deployed (batch normalisation folded into each
 * convolution's bias: wl_build.h, gb_conv); the graph ends at the detection heads' raw outputs (box
 * decoding and non-maximum suppression run on the host, outside the accelerator). */
#include <stdio.h>
#include <string.h>

#include "wl_cnn_gen.h"

const struct wl_cnn_gen wl_yolo_gens[] = {
    {NULL, NULL, NULL},
};
