#include "meshsim/collectives/algorithms/algorithm_args.h"

namespace meshsim {

std::string_view collective_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllToAll: return "all_to_all";
    case Collective::kRaggedAllToAll: return "ragged_all_to_all";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kBarrier: return "barrier";
  }
  return "?";
}

bool collective_from_name(std::string_view name, Collective& out) {
  for (Collective c : kAllCollectives) {
    if (collective_name(c) == name) {
      out = c;
      return true;
    }
  }
  struct Alias {
    std::string_view name;
    Collective collective;
  };
  static constexpr Alias kAliases[] = {
      {"psum", Collective::kAllReduce},          {"pmax", Collective::kAllReduce},
      {"pmin", Collective::kAllReduce},          {"pmean", Collective::kAllReduce},
      {"psum_scatter", Collective::kReduceScatter}, {"pbroadcast", Collective::kBroadcast},
      {"pswapaxes", Collective::kAllToAll},
  };
  for (const Alias& a : kAliases) {
    if (a.name == name) {
      out = a.collective;
      return true;
    }
  }
  return false;
}

}  // namespace meshsim
