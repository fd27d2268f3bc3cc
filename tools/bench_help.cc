#include "tools/bench_help.h"

#include <fmt/format.h>

#include "tools/bench_collectives.h"

namespace meshsim::cli {

std::string bench_help_footer() {
  std::string out =
      "\nCollectives (n = devices per group over --axes, N = devices in the mesh,\n"
      "c = a size of the sweep / dtype bytes, S = the size column):\n";
  out += fmt::format("  {:<18} {:<13} {:<9} {:<14} {}\n", "name", "alias", "busbw", "floor",
                     "what one call does");
  for (const Collective& c : collectives()) {
    out += fmt::format("  {:<18} {:<13} {:<9} {:<14} {}\n", c.name, c.alias, c.bus_formula,
                       c.floor_formula, c.summary);
  }
  out += R"(
Timing: one launch per size. In it every device makes --warmup calls, then
--iters timed calls back to back, and times its own loop with steady_clock.
time is the MAX over devices of (device time / iters), since a collective is
as slow as its slowest member; med is the MEDIAN over devices of the same.
With --check, every call (warmup included) is followed by an untimed
barrier of its group (psum of one int32), then by the device comparing its
result with the reference. Checking delays a device's next call, so each
timed call is measured on its own, from the moment the LAST member of the
group entered it (steady_clock is one clock for all device threads) to the
device's return; time / med are the max / median over devices of the mean of
these. (The barrier keeps devices that check from taking the cores that peers
still need to return.) Checked calls are not pipelined: compare runs with and
without --check with that in mind.

Columns (nccl-tests conventions; one row per size, sizes -b, -b*f, ... <= -e):
  size    bytes of ONE device: max(its input, its output), as nccl-tests'
          max(sendBytes, recvBytes). all_reduce, ppermute, pbroadcast: c
          elements; all_gather: its output, n*(c/n) elements; reduce_scatter:
          its input, n*(c/n) elements; all_to_all, ragged_all_to_all: n*(c/n)
          elements in and out. Sizes round down to whole elements and to a
          multiple of n where the buffer splits in n; a size that leaves no
          element per device is skipped. A bool sum's output is int32, so its
          size counts 4 bytes per element.
  count   the collective's count parameter: c for all_reduce, ppermute,
          pbroadcast; c/n for all_gather (input per device), reduce_scatter
          (output per device), all_to_all and ragged_all_to_all (per peer; the
          mean for ragged, whose per-peer sizes are random but whose rows and
          columns each add up to n*(c/n)).
  type    the input dtype (--dtype).
  redop   sum, max or min for all_reduce and reduce_scatter, else none.
  root    pbroadcast's source rank (--root), else -1.
  time    us per call: the max over devices (see Timing).
  algbw   size / time in GB/s (1 GB = 1e9 B).
  busbw   algbw * the busbw factor of the table above: all-reduce 2(n-1)/n;
          all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast and
          ppermute (nccl-tests' sendrecv) 1.
  #wrong  with --check: elements whose bits differ from the reference, over
          all devices and all calls of the size; N/A without --check.
  med     us per call: the median over devices.
  algorithm, chosen by
          what ran and the rule that chose it (the call's --algo, a
          MESHSIM_ALGO rule, a runtime rule, or the default), as mesh
          position 0 recorded its first call of the size.
  model, mbusbw
          with --topology: one more launch makes one call in virtual time on
          a model of the topology (--network: congestion-unaware, or
          congestion-aware, where messages queue for shared links; mesh
          position p on node p); model is the latest device's clock at its
          end, in us, and
          mbusbw the busbw that time gives. The topology is a JSON file
          (ASTRA-sim's network description) or a one-line spec:
            kind[:sizes]:bw=BANDWIDTH,lat=LATENCY[;...]   e.g.
            ring:bw=50GB/s,lat=500ns   switch:bw=400GB/s,lat=1us
            torus2d:4x4:bw=100GB/s,lat=1us   ring:8:bw=400GB/s,lat=100ns;switch:4:bw=50GB/s,lat=2us
          kinds: fully_connected, switch, ring, bidirectional_ring, torus2d,
          torus3d; bandwidth in bytes/s (B/s KB/s MB/s GB/s, KiB/s ...),
          latency in s ms us ns. --trace FILE writes that call at the
          largest size (or, without --topology, a traced call in wall time)
          as Chrome trace JSON for ui.perfetto.dev; with --algo all, the
          call of the last algorithm applicable at that size.

Algorithms (`meshsim algorithms` lists them with their preconditions, costs
and tunables): --algo NAME forces one (the run fails if its preconditions
do not hold at a size); --algo auto takes the least
modelled cost per call; without --algo the runtime chooses (MESHSIM_ALGO,
else direct). --algo all runs, at each size, every algorithm applicable to
it, one launch each on the same inputs, and prints them side by side: the
size columns once, then time and busbw per algorithm ("-" where one does not
apply), then #wrong over all of them (--check checks every algorithm's every
call); the summary names any algorithm with wrong elements and gives each
one's mean busbw. csv and json write one record per size and algorithm.
ppermute, ragged_all_to_all and barrier run direct only.

Reference and floors: before the sweep the header measures a memcpy of
N*S_max bytes (S_max = -e rounded down to the sweep; at most 512 MiB) with 2
threads, between buffers already touched: the devices' whole working set, so
the copy is in cache exactly when the collective's data is. A run repeats it
until 16 MiB have moved, and the median of 5 runs gives B = bytes moved / t,
in GB/s. The floor is the time the whole machine needs to copy a
collective's bytes at B, the target for large sizes (the header prints it at
S_max):
  all_reduce          2*N*S / B: every input is read once by the reduction
                      and every result copied once to the other members.
  all_gather          N*S / B: every device writes its S-byte output.
  reduce_scatter      N*S / B: every device's S-byte input is read once.
  all_to_all, ragged  N*S / B: every device writes its S-byte output.
  ppermute, pbroadcast, barrier: no copy floor. The direct ppermute and
                      pbroadcast are zero-copy (the result shares the source's
                      storage), so they time the meeting, not a copy, and
                      their algbw is not a memory bandwidth.
Devices run as OS threads while each has a usable core, and as fibers on one
worker thread per core once they outnumber the cores (--exec overrides; the
header says which ran). Small sizes are bound by meetings, not bytes. The
header also measures the meeting floor on the D devices (D = the mesh's
devices; a runtime of its own, before the sweep): the time of one episode of
a yield barrier (a shared counter; waiters spin while every thread has a
core, else yield; they never block), the cheapest way for D devices to meet
on this machine, and on threads of std::barrier for comparison. A collective
whose groups span all D devices meets at least once, so at small S it cannot
beat one such episode. Groups over a sub-axis may meet faster while cores
are free.

Inputs hold small integers, exact in every dtype, so a correct result is
bitwise equal to the reference computed sequentially on the host from all
devices' inputs.

Output: --format table prints '#' header lines (machine: hostname, nproc, CPU
model; devices, mesh, axes, dtype, op, iters / warmup; the memcpy reference
and floor; the meeting floor), the table, then the total of wrong elements and the mean busbw.
csv prints the same '#' lines, then a header row and one line per size.
json prints one object with the same fields and a "rows" array. Rows appear
as each size finishes; a progress line updates on stderr (when it is a
terminal) once the sweep has run for more than a second.

Exit status: 0 on success; 1 if --check found a wrong element or a launch
failed (timeout, error); 2 for a bad command line.

Examples:
  meshsim bench all_reduce --mesh 8 -b 8 -e 64M -f 4 --check
  meshsim bench all_gather --mesh x=4,y=2 --axes y --dtype bf16 --format csv
  meshsim bench all_reduce --mesh 8 --algo all -b 8 -e 64M -f 8 --check
)";
  return out;
}

}  // namespace meshsim::cli
