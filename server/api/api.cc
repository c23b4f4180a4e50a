// SPDX-License-Identifier: Apache-2.0
#include "server/api/api.h"

#include "server/api/routes.h"

namespace perfwarden::server::api {

void RegisterRoutes(http::Router& router, const ApiDeps& deps) {
  RegisterHealthRoutes(router, deps);
  RegisterProjectRoutes(router, deps);
  RegisterRunRoutes(router, deps);
  RegisterSeriesRoutes(router, deps);
  RegisterCompareRoutes(router, deps);
  RegisterVerdictRoutes(router, deps);
  RegisterAlertRoutes(router, deps);
  RegisterBisectRoutes(router, deps);
  RegisterBisectStepRoutes(router, deps);
}

}  // namespace perfwarden::server::api
