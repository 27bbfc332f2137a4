#pragma once
/// \file provider_registry.hpp
/// Saving a ForceField's providers as tagged checkpoint sections and making
/// them again from those sections. Each provider writes and reads its own
/// section (ForceProvider::save and the loader registered under its name);
/// the built-in "bonds", "contact", "walls" and "gravity" are registered
/// from the start, and a new provider registers its loader once
/// (register_provider_loader) to be restorable.

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/force_provider.hpp"
#include "engine/force_field.hpp"

namespace dem {

/// One provider's checkpoint section: its name() and the bytes its save() wrote.
struct ProviderSection {
  std::string name;
  std::vector<std::byte> bytes;
};

/// Makes a provider from its section; may throw StateError.
using ProviderLoader = std::function<std::unique_ptr<ForceProvider>(ByteReader&, const ParticleStore&)>;

/// Registers the loader of the providers named `name` (replacing any).
void register_provider_loader(const std::string& name, ProviderLoader loader);

/// The sections of every provider of `forces`, in its order.
std::vector<ProviderSection> save_providers(const ForceField& forces);

/// A ForceField made of the providers of these sections, in order, for
/// these particles. Throws StateError for a name no loader is registered
/// for, a section its loader refuses, or bytes left over in a section.
ForceField load_providers(const std::vector<ProviderSection>& sections, const ParticleStore& particles,
                          bool reorder_on_rebuild);

}  // namespace dem
