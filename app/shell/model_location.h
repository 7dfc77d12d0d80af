#pragma once
// Where the bundled tiny model is: next to an installed app (../share/strata/models), else in
// the source tree the app was built from.
#include <QString>

namespace strata::app {

// `appDir`: the folder of the running executable. Empty if neither place has the model.
QString bundledModelFolder(const QString& appDir);

}  // namespace strata::app
