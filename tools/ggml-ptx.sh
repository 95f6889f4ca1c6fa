#!/usr/bin/env bash
# Compiles the llama.cpp (ggml) CUDA kernels that `pnpm bench -- --ggml DIR` models beside Forge's:
# mul_mat_vec_q for Q4_K, Q6_K and Q8_0 at ncols_dst 1 (mmvq.cu), quantize_q8_1 (quantize.cu), and
# flash_attn_ext_vec for f16 K/V, head_dim 128, one query column, with flash_attn_combine_results
# (fattn-vec.cuh, fattn-common.cuh). Nothing of ggml enters this repository: the sources are read
# from the checkout and everything written goes to the output directory.
#
# usage: tools/ggml-ptx.sh LLAMA_CPP_OR_GGML_CHECKOUT OUTPUT_DIR
# writes: OUTPUT_DIR/ggml-sm_80.ptx, OUTPUT_DIR/ggml-sm_90.ptx, OUTPUT_DIR/SOURCE (commit, nvcc, flags)
# needs: nvcc (CUDA 12.x or 13.x) on the PATH, or NVCC; no GPU.
set -euo pipefail

if [ "$#" -ne 2 ]; then
  echo "usage: $0 LLAMA_CPP_OR_GGML_CHECKOUT OUTPUT_DIR" >&2
  exit 2
fi
checkout=$(cd "$1" && pwd)
output=$(realpath -m "$2")
nvcc=${NVCC:-nvcc}

# llama.cpp keeps ggml under ggml/; the ggml repository itself at its root.
if [ -d "$checkout/ggml/src/ggml-cuda" ]; then
  ggml="$checkout/ggml"
elif [ -d "$checkout/src/ggml-cuda" ]; then
  ggml="$checkout"
else
  echo "$checkout has neither ggml/src/ggml-cuda (llama.cpp) nor src/ggml-cuda (ggml)" >&2
  exit 1
fi
cuda="$ggml/src/ggml-cuda"

# The repository must stay free of peers' code and PTX: refuse an output directory inside it.
repository=$(realpath "$(dirname "$0")/..")
case "$output/" in
  "$repository"/*)
    echo "$output is inside the Forge repository; choose a directory outside it" >&2
    exit 1
    ;;
esac
mkdir -p "$output"

# mmvq.cu and quantize.cu define their kernels as static functions beside host launchers that would
# instantiate every type and column count; only the device part (up to the first launcher) is kept.
cut_before() { # file, extended regex of the first line not to keep; fails when the line is missing
  awk -v pattern="$2" '$0 ~ pattern { found = 1; exit } { print } END { exit found ? 0 : 1 }' "$1"
}
layout_changed() { echo "$1 no longer has the layout this script cuts (see its comments)" >&2; exit 1; }
# calc_launch_params is the first host launcher in mmvq.cu; its `template<…>` line goes with it.
cut_before "$cuda/mmvq.cu" '^static std::pair<dim3, dim3> calc_launch_params' |
  sed '$ { /^template/d }' >"$output/mmvq-kernels.cuh" || layout_changed "$cuda/mmvq.cu"
cut_before "$cuda/quantize.cu" '^void quantize_row_q8_1_cuda' >"$output/quantize-kernels.cuh" ||
  layout_changed "$cuda/quantize.cu"
grep -q 'mul_mat_vec_q(' "$output/mmvq-kernels.cuh" || layout_changed "$cuda/mmvq.cu"
grep -q 'quantize_q8_1(' "$output/quantize-kernels.cuh" || layout_changed "$cuda/quantize.cu"

# Our instantiation file: taking each kernel's address makes nvcc emit exactly these entries.
cat >"$output/ggml-forge-kernels.cu" <<'EOF'
// Written by Forge's tools/ggml-ptx.sh: the ggml kernels its bench models, nothing else.
#include "mmvq-kernels.cuh"
#include "quantize-kernels.cuh"
#include "fattn-vec.cuh"

void * forge_ggml_kernels[] = {
    (void *) mul_mat_vec_q<GGML_TYPE_Q4_K, 1, false, false, false>,
    (void *) mul_mat_vec_q<GGML_TYPE_Q6_K, 1, false, false, false>,
    (void *) mul_mat_vec_q<GGML_TYPE_Q8_0, 1, false, false, false>,
    (void *) quantize_q8_1,
    (void *) flash_attn_ext_vec<128, 1, GGML_TYPE_F16, GGML_TYPE_F16, false>,
    (void *) flash_attn_combine_results<128>,
};
EOF

# llama.cpp's release build flags for these files (ggml-cuda/CMakeLists.txt: -use_fast_math; CMake
# Release: -O3 -DNDEBUG; C++17), -ptx for each arch the bench's GPUs run.
flags=(-ptx -O3 -use_fast_math -std=c++17 -DNDEBUG -I"$cuda" -I"$ggml/src" -I"$ggml/include")

# common.cuh includes cuBLAS for host code these kernels never reach; a toolkit with only nvcc
# lacks the header, so declarations of what common.cuh names stand in (no device code changes).
if ! echo '#include <cublas_v2.h>' | "$nvcc" -E -x cu - -o /dev/null 2>/dev/null; then
  mkdir -p "$output/cublas-declarations"
  cat >"$output/cublas-declarations/cublas_v2.h" <<'EOF'
// Written by Forge's tools/ggml-ptx.sh: what ggml's common.cuh names of cuBLAS, for -ptx only.
#pragma once
#include <cstddef>
#include <cuda_runtime.h>
#define CUBLAS_VER_MAJOR 13
#define CUBLAS_VER_MINOR 0
typedef enum {
  CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_ARCH_MISMATCH = 8, CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13, CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15, CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;
typedef enum { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TENSOR_OP_MATH = 1, CUBLAS_TF32_TENSOR_OP_MATH = 3 } cublasMath_t;
typedef enum { CUBLAS_COMPUTE_16F = 64, CUBLAS_COMPUTE_32F = 68 } cublasComputeType_t;
typedef struct cublasContext * cublasHandle_t;
const char * cublasGetStatusString(cublasStatus_t status);
cublasStatus_t cublasCreate(cublasHandle_t * handle);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void * workspace, size_t bytes);
EOF
  flags+=(-I"$output/cublas-declarations")
fi
for arch in sm_80 sm_90; do
  echo "$nvcc ${flags[*]} -arch=$arch $output/ggml-forge-kernels.cu -o $output/ggml-$arch.ptx"
  "$nvcc" "${flags[@]}" -arch="$arch" "$output/ggml-forge-kernels.cu" -o "$output/ggml-$arch.ptx"
done

{
  echo "checkout: $checkout"
  echo "commit: $(git -C "$ggml" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "nvcc: $("$nvcc" --version | tail -1)"
  echo "flags: ${flags[*]} -arch=sm_80|sm_90"
} >"$output/SOURCE"
cat "$output/SOURCE"
