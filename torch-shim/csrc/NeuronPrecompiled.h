/* SPDX-License-Identifier: MIT */
/*
 * The PyTorch headers that most of torch_neuron's sources include,
 * compiled once into a precompiled header that the Makefile force-includes
 * in every source (a build-time saving only: each source still includes
 * what it uses). Parsing them was most of a source's compile time.
 */
#ifndef NEURON_PRECOMPILED_H
#define NEURON_PRECOMPILED_H

#include <ATen/ATen.h>
#include <torch/library.h>

#endif
