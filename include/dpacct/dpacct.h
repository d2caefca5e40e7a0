/* dpacct — differential-privacy accounting. Umbrella header.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPACCT_H
#define DPACCT_H

#define DPACCT_VERSION "0.1.0"

#include "status.h"
#include "decimal.h"
#include "event.h"
#include "accountant.h"
#include "calibrate.h"
#include "wisdom.h"
#include "renyi.h"
#include "tradeoff.h"
#include "profile.h"
#include "filter.h"
#include "ledger.h"

#endif
