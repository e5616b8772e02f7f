#!/usr/bin/env node
"use strict";
// `mcpdiff` is `worksnap history`
require("../lib/run.js").run(["history"]);
