// Drives the edgeplane cloud emulator with the official Tencent Cloud
// Node.js SDK (tencentcloud-sdk-nodejs), through its endpoint override, and
// prints one JSON object describing what the SDK saw. The Go test
// (../compat_test.go) starts the emulator, runs this script and asserts.
//
// Environment:
//   TC_ENDPOINT     host:port of the emulator
//   TC_SECRET_ID    SecretId the emulator accepts
//   TC_SECRET_KEY   SecretKey the emulator accepts
//   TC_INSTANCE_ID  a CVM instance seeded in the emulator
"use strict";

const tencentcloud = require("tencentcloud-sdk-nodejs");

function env(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`environment variable ${name} is required`);
  }
  return v;
}

const clientConfig = {
  credential: { secretId: env("TC_SECRET_ID"), secretKey: env("TC_SECRET_KEY") },
  region: "ap-hongkong",
  profile: { httpProfile: { endpoint: env("TC_ENDPOINT"), protocol: "http://", reqTimeout: 30 } },
};
const vpc = new tencentcloud.vpc.v20170312.Client(clientConfig);
const tag = new tencentcloud.tag.v20180813.Client(clientConfig);
const cvm = new tencentcloud.cvm.v20170312.Client(clientConfig);
const instanceId = env("TC_INSTANCE_ID");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Async actions answer TaskId as a string; DescribeTaskResult takes an
// integer.
async function waitTask(taskId) {
  for (let i = 0; i < 1000; i++) {
    const r = await vpc.DescribeTaskResult({ TaskId: Number(taskId) });
    if (r.Result === "SUCCESS") {
      return;
    }
    if (r.Result === "FAILED") {
      throw new Error(`task ${taskId} failed`);
    }
    await sleep(20);
  }
  throw new Error(`task ${taskId} did not finish`);
}

async function main() {
  const out = {};

  const alloc = await vpc.AllocateAddresses({
    AddressType: "AnycastEIP",
    AnycastZone: "ANYCAST_ZONE_OVERSEAS",
    InternetMaxBandwidthOut: 10,
    AddressName: "compat-node",
    Tags: [{ Key: "edgeplane.io/owner", Value: "node-sdk" }],
    ClientToken: "compat-node-1",
  });
  out.allocate = { addressSet: alloc.AddressSet, taskIdType: typeof alloc.TaskId, requestId: alloc.RequestId };
  const id = alloc.AddressSet[0];
  await waitTask(alloc.TaskId);

  const again = await vpc.AllocateAddresses({
    AddressType: "AnycastEIP",
    Tags: [{ Key: "edgeplane.io/owner", Value: "node-sdk" }],
    ClientToken: "compat-node-1",
  });
  out.idempotentAllocate = { addressSet: again.AddressSet };

  const byTag = await tag.DescribeResourcesByTags({
    TagFilters: [{ TagKey: "edgeplane.io/owner", TagValue: ["node-sdk"] }],
    ResourcePrefix: "eip",
  });
  out.tagLookup = { total: byTag.TotalCount, ids: byTag.Rows.map((r) => r.ResourceId) };

  const insts = await cvm.DescribeInstances({ InstanceIds: [instanceId] });
  out.instance = { total: insts.TotalCount, privateIps: insts.InstanceSet[0].PrivateIpAddresses };

  const bind = await vpc.AssociateAddress({ AddressId: id, InstanceId: instanceId });
  await waitTask(bind.TaskId);
  const bound = await vpc.DescribeAddresses({ AddressIds: [id] });
  const a = bound.AddressSet[0];
  out.describeBound = {
    total: bound.TotalCount,
    status: a.AddressStatus,
    type: a.AddressType,
    instanceId: a.InstanceId,
    privateIp: a.PrivateAddressIp,
    tags: a.TagSet,
  };
  // An address's tags after its allocation: the tag API's ModifyResourceTags,
  // naming the address by its six-segment resource description.
  await tag.ModifyResourceTags({
    Resource: `qcs::cvm:ap-hongkong:uin/:eip/${id}`,
    ReplaceTags: [{ TagKey: "team", TagValue: "edge" }],
    DeleteTags: [{ TagKey: "edgeplane.io/owner" }],
  });
  const retagged = await vpc.DescribeAddresses({ AddressIds: [id] });
  out.retagged = { tags: retagged.AddressSet[0].TagSet };
  try {
    await tag.ModifyResourceTags({ Resource: `qcs::cvm:ap-hongkong:uin/:eip/${id}`, ReplaceTags: [{ TagKey: "qcloud:app", TagValue: "x" }] });
    out.reservedTag = { code: "" };
  } catch (e) {
    out.reservedTag = { code: e.code };
  }

  const byFilter = await vpc.DescribeAddresses({
    Filters: [{ Name: "instance-id", Values: [instanceId] }, { Name: "address-type", Values: ["AnycastEIP"] }],
  });
  out.describeByFilter = { total: byFilter.TotalCount };

  const unbind = await vpc.DisassociateAddress({ AddressId: id });
  await waitTask(unbind.TaskId);
  const release = await vpc.ReleaseAddresses({ AddressIds: [id] });
  await waitTask(release.TaskId);
  const after = await vpc.DescribeAddresses({ AddressIds: [id] });
  out.afterRelease = { total: after.TotalCount };

  try {
    await vpc.ReleaseAddresses({ AddressIds: ["eip-00000000"] });
    out.error = { code: "" };
  } catch (e) {
    out.error = { code: e.code, requestId: e.requestId };
  }

  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ fatal: String(e && e.message), code: e && e.code }) + "\n");
  process.exit(1);
});
