// The packing report: lines and JSON (docs/model.md §21.4).
#include "scene/packing_report.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/format.hpp"

namespace dem {

namespace {

nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

}  // namespace

std::vector<std::string> report_lines(const PackingReport& r) {
  std::vector<std::string> out;
  const std::string requested = r.requested_solid_fraction ? format_g(*r.requested_solid_fraction, 4)
                                                           : std::string("\"dense\": the jamming point");
  out.push_back("packing: " + std::to_string(r.delivered_count) + " particles (" + std::to_string(r.requested_count) +
                " drawn), solid fraction " + format_g(r.solid_fraction, 4) + " (requested " + requested + ")" +
                (r.requested_solid_fraction ? "" : ", diameters x " + format_g(r.scale, 6) + ", " +
                                                       (r.jammed ? "jammed" : "NOT jammed")) +
                "; largest overlap " + format_g(r.max_overlap_ratio, 2) + " of the smaller diameter after " +
                std::to_string(r.sweeps) + " FIRE steps in " + std::to_string(r.relaxations) + " relaxations");
  if (r.tile_particles > 0)
    out.push_back("packing: tiled: the genesis ran in a periodic tile of " + std::to_string(r.tile_particles) +
                  " particles (edges " + format_g(r.tile_side[0], 4) + " x " + format_g(r.tile_side[1], 4) + " x " +
                  format_g(r.tile_side[2], 4) + "), repeated " + std::to_string(r.tiles[0]) + " x " +
                  std::to_string(r.tiles[1]) + " x " + std::to_string(r.tiles[2]) +
                  " times over the region and clipped to it");
  out.push_back("packing: interior (deeper than " + format_g(r.interior_margin, 3) + ") solid fraction " +
                (r.interior_volume > 0.0 ? format_g(r.interior_solid_fraction, 4) : std::string("- (no interior)")));
  out.push_back("packing: " + std::to_string(r.contacts) + " contacts (overlap > 0), mean coordination number " +
                format_g(r.mean_coordination, 4) + ", without the " + std::to_string(r.rattlers) +
                " rattlers (< 4 contacts) " + format_g(r.mean_coordination_non_rattlers, 4) +
                "; fabric anisotropy " + format_g(r.fabric_anisotropy, 3));
  out.push_back("packing: " + std::to_string(r.floaters_removed) + " floaters (< 3 contacts) removed (" +
                format_g(100.0 * r.floater_fraction, 3) + "%), " + std::to_string(r.below_three) +
                " particles left with < 3" + (r.floaters_note.empty() ? "" : " (" + r.floaters_note + ")"));
  if (!r.sieve.empty()) {
    std::string line = "packing: percent passing by mass, achieved (table):";
    for (std::size_t k = 0; k < r.sieve.size(); ++k)
      line += (k ? ", " : " ") + format_g(r.sieve[k].size) + ": " + format_g(r.sieve[k].achieved, 3) + " (" +
              format_g(r.sieve[k].requested, 3) + ")";
    out.push_back(line);
  }
  return out;
}

std::string report_json(const PackingReport& r) {
  nlohmann::json j;
  j["requested_count"] = r.requested_count;
  j["delivered_count"] = r.delivered_count;
  j["requested_solid_fraction"] =
      r.requested_solid_fraction ? nlohmann::json(*r.requested_solid_fraction) : nlohmann::json("dense");
  j["solid_fraction"] = number(r.solid_fraction);
  j["interior"] = {{"margin", number(r.interior_margin)},
                   {"volume", number(r.interior_volume)},
                   {"solid_fraction", number(r.interior_solid_fraction)}};
  j["coordination"] = {{"contacts", r.contacts},
                       {"mean", number(r.mean_coordination)},
                       {"mean_non_rattlers", number(r.mean_coordination_non_rattlers)},
                       {"rattlers", r.rattlers}};
  j["floaters"] = {{"removed", r.floaters_removed},
                   {"fraction_removed", number(r.floater_fraction)},
                   {"below_three", r.below_three},
                   {"note", r.floaters_note}};
  nlohmann::json f = nlohmann::json::array();
  for (int a = 0; a < 3; ++a) f.push_back({number(r.fabric(a, 0)), number(r.fabric(a, 1)), number(r.fabric(a, 2))});
  j["fabric"] = {{"tensor", f}, {"anisotropy", number(r.fabric_anisotropy)}};
  j["max_overlap_ratio"] = number(r.max_overlap_ratio);
  j["genesis"] = {{"fire_steps", r.sweeps}, {"relaxations", r.relaxations}, {"jammed", r.jammed},
                  {"diameter_scale", number(r.scale)}};
  j["tiling"] = {{"tile_particles", r.tile_particles},
                 {"tile_edges", {number(r.tile_side[0]), number(r.tile_side[1]), number(r.tile_side[2])}},
                 {"tiles", {r.tiles[0], r.tiles[1], r.tiles[2]}}};
  nlohmann::json sieve = nlohmann::json::array();
  for (const SievePassing& s : r.sieve)
    sieve.push_back({{"size", s.size}, {"requested_percent", s.requested}, {"achieved_percent", s.achieved}});
  j["sieve"] = sieve;
  return j.dump(2);
}

void add_packing_report(const PackingReport& r, std::vector<std::string>& notes, std::string& json) {
  for (std::string& line : report_lines(r)) notes.push_back(std::move(line));
  const nlohmann::json mine = nlohmann::json::parse(report_json(r));
  if (json.empty()) {
    json = mine.dump(2);
    return;
  }
  nlohmann::json all = nlohmann::json::parse(json);
  if (!all.is_array()) all = nlohmann::json::array({all});
  all.push_back(mine);
  json = all.dump(2);
}

}  // namespace dem
