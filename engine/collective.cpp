#include "engine/collective.hpp"

namespace dem {

SerialCollective& serial_collective() {
  static SerialCollective one;
  return one;
}

bool whole_rebuild_due(Collective& collective, const NeighbourSearch& search, const ParticleStore& particles) {
  DriftSummary d = search.drift_summary(particles.position);
  collective.max(d.values);
  if (const std::optional<bool> decided = search.rebuild_decision(d)) return *decided;
  const double spread = collective.maximum(search.drift_spread(particles.position, d));
  return search.rebuild_decision(d, spread);
}

}  // namespace dem
