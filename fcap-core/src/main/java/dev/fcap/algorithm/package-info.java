/**
 * Not API: the counting algorithms as pure functions over compact binary states, and
 * {@link dev.fcap.algorithm.PartitionStep}, the one atomic step over a partition that every store runs
 * (Redis runs its Lua mirror, {@code partition.lua}). {@code PartitionStep}, {@code CounterAlgorithm},
 * {@code CounterStates} and {@code LargeLog} are public only because the stores that call them sit in
 * another package ({@code store.memory}) and another jar (fcap-redis); applications use
 * {@code dev.fcap.engine.Engine}.
 */
package dev.fcap.algorithm;
