// Makes one DescribeAddresses call with the official Tencent Cloud Node.js
// SDK and prints what it saw as JSON: {"code": "...", "requestId": "..."}
// ("code" is empty when the call succeeded). The Go test
// (../compat_test.go) runs it with good and bad credentials against
// emulators with a correct or a skewed clock.
//
// Environment: TC_ENDPOINT (host:port), TC_SECRET_ID, TC_SECRET_KEY.
"use strict";

const tencentcloud = require("tencentcloud-sdk-nodejs");

const vpc = new tencentcloud.vpc.v20170312.Client({
  credential: { secretId: process.env.TC_SECRET_ID, secretKey: process.env.TC_SECRET_KEY },
  region: "ap-hongkong",
  profile: { httpProfile: { endpoint: process.env.TC_ENDPOINT, protocol: "http://", reqTimeout: 30 } },
});

vpc
  .DescribeAddresses({})
  .then(() => process.stdout.write(JSON.stringify({ code: "" }) + "\n"))
  .catch((e) => process.stdout.write(JSON.stringify({ code: e.code || String(e), requestId: e.requestId }) + "\n"));
