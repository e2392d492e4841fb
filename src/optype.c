/* optype.c -- operator type names. */
#include "optype.h"

#include <string.h>

const char *const op_type_names[OP_COUNT + 1] = {"matmul", "conv2d", "attention", "softmax", "layernorm",
                                                 "rmsnorm", "eltwise", "embedding", "pool", "concat",
                                                 "reshape", "slice", NULL};

int op_type_from_name(const char *s)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(op_type_names[i], s) == 0)
            return i;
    return -1;
}

int op_type_is_gemm(enum op_type t) { return t == OP_MATMUL || t == OP_CONV2D || t == OP_ATTENTION; }
