#pragma once
/// \file friction_wall_provider.hpp
/// Plane walls with the Hertz-Mindlin law (docs/model.md §11.2): the
/// generic wall provider of contact/wall_contact_provider.hpp over
/// HertzMindlinLaw, checkpoint section "mwalls".

#include "contact/hertz_mindlin.hpp"
#include "contact/wall_contact_provider.hpp"

namespace dem {

using FrictionWallProvider = WallContactProvider<HertzMindlinLaw>;

}  // namespace dem
