/* wl_cnn_gen.h -- CNN generator families, internal to the workload layer. Each family file holds one
 * table of generators (wl_cnn.c: ResNet-50 v1.5 and MobileNetV2 as first shipped; wl_cnn_cls.c:
 * further classification backbones; wl_yolo.c: single-stage detectors); wl_cnn.c looks a spec's
 * "generator" up in all of them. */
#ifndef DSE_WL_CNN_GEN_H
#define DSE_WL_CNN_GEN_H

#include "wl_build.h"

struct wl_cnn_gen {
    const char *name;     /* the spec's "generator" */
    const char *variants; /* comma-separated values the spec's "variant" may take; NULL: it takes none */
    /* Builds the network on b from its input image x ([B, 3, H, W]); returns b->rc. */
    int (*build)(struct gb *b, const struct wl_cnn *c, int x);
};

/* Each table ends with an entry whose name is NULL. */
extern const struct wl_cnn_gen wl_cnn_cls_gens[];
extern const struct wl_cnn_gen wl_yolo_gens[];

#endif
