#include "engine/provider_registry.hpp"

#include <map>
#include <mutex>

#include "bonds/bond_laws.hpp"
#include "contact/contact_laws.hpp"
#include "engine/cell_provider.hpp"
#include "fields/gravity_provider.hpp"
#include "fields/load_provider.hpp"
#include "fields/viscous_damping_provider.hpp"

namespace dem {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, ProviderLoader> loaders;
  Registry() {
    // Every bond law's and contact law's sections, from their registry entries.
    for (const BondLawEntry& law : bond_laws())
      for (const auto& [name, loader] : law.sections) loaders[name] = loader;
    // Every contact law's sections (pairs and walls), from its registry entry.
    for (const ContactLawEntry& law : contact_laws())
      for (const auto& [name, loader] : law.sections) loaders[name] = loader;
    loaders["loads"] = [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
      return LoadProvider::load(r, s);
    };
    loaders["gravity"] = [](ByteReader& r, const ParticleStore&) -> std::unique_ptr<ForceProvider> {
      return GravityProvider::load(r);
    };
    loaders["damping"] = [](ByteReader& r, const ParticleStore&) -> std::unique_ptr<ForceProvider> {
      return ViscousDampingProvider::load(r);
    };
    loaders["cell"] = [](ByteReader& r, const ParticleStore&) -> std::unique_ptr<ForceProvider> {
      return CellProvider::load(r);
    };
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_provider_loader(const std::string& name, ProviderLoader loader) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.loaders[name] = std::move(loader);
}

std::vector<ProviderSection> save_providers(const ForceField& forces) {
  std::vector<ProviderSection> out;
  for (const auto& p : forces.providers()) {
    ProviderSection s;
    s.name = p->name();
    ByteWriter w(s.bytes);
    p->save(w);
    out.push_back(std::move(s));
  }
  return out;
}

ForceField load_providers(const std::vector<ProviderSection>& sections, const ParticleStore& particles,
                          bool reorder_on_rebuild) {
  ForceField field;
  field.set_reorder_on_rebuild(reorder_on_rebuild);
  for (const ProviderSection& s : sections) {
    ProviderLoader loader;
    {
      Registry& r = registry();
      std::lock_guard lock(r.mutex);
      const auto it = r.loaders.find(s.name);
      if (it == r.loaders.end())
        throw StateError("inconsistent: no force provider named '" + s.name + "' is known to this build");
      loader = it->second;
    }
    ByteReader reader(s.bytes);
    std::unique_ptr<ForceProvider> p;
    try {
      p = loader(reader, particles);
      reader.expect_end(("the '" + s.name + "' section").c_str());
    } catch (const StateError& e) {
      throw StateError("provider '" + s.name + "': " + e.what());
    } catch (const std::invalid_argument& e) {
      throw StateError("provider '" + s.name + "': inconsistent: " + e.what());
    }
    if (p->name() != s.name)
      throw StateError("inconsistent: the loader of '" + s.name + "' made a provider named '" + p->name() + "'");
    try {
      field.add(std::move(p));
    } catch (const std::invalid_argument& e) {
      throw StateError(std::string("inconsistent: ") + e.what());
    }
  }
  return field;
}

}  // namespace dem
