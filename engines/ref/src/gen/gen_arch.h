/* gen_arch.h: the architecture builders the generator dispatches to, one file each.
 * They must never validate options themselves (gen.c does, before any of them runs) nor write files. */
#ifndef REF_GEN_ARCH_H
#define REF_GEN_ARCH_H

#include "gen_builder.h"
#include "refengine.h"

/* Each appends the whole graph (input "input", output "output") to b's model and returns b->rc. */
int ref_gen_build_mlp(ref_gb *b, const ref_gen_options *o);
int ref_gen_build_mobilenetv2(ref_gb *b, const ref_gen_options *o);
int ref_gen_build_resnet(ref_gb *b, const ref_gen_options *o, int depth); /* 18 or 50 */
int ref_gen_build_transformer(ref_gb *b, const ref_gen_options *o);
int ref_gen_build_chain(ref_gb *b, const ref_gen_options *o);

/* MobileNetV2's channel rounding: v to a multiple of 8, at least 8 and never below 90% of v. */
int64_t ref_gen_make_divisible(double v);

#endif
