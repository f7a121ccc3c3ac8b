// Drives the emulator's Tencent ENI model with the official Node.js SDK:
// DescribeNetworkInterfaces (filters, exact and fuzzy address-ip, paging,
// errors) and AssociateAddress to a private IP of an ENI (binding, the
// documented refusals, unbinding), then prints one JSON object describing
// what the SDK saw. The Go test (../compat_test.go) seeds the emulator,
// runs this script and asserts.
//
// Environment:
//   TC_ENDPOINT      host:port of the emulator
//   TC_SECRET_ID     SecretId the emulator accepts
//   TC_SECRET_KEY    SecretKey the emulator accepts
//   TC_VPC_ID        the VPC of the seeded ENIs
//   TC_POD_IP        a pod IP on a secondary ENI; TC_POD_IP + "0" is a pod
//                    IP on another ENI
//   TC_DANGLING_ENI  an ENI attached to no instance
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
const vpcId = env("TC_VPC_ID");
const podIp = env("TC_POD_IP");
const danglingEni = env("TC_DANGLING_ENI");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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

// code runs a call that must fail and returns its error code ("" if it
// succeeded).
async function code(call) {
  try {
    await call();
    return "";
  } catch (e) {
    return e.code || String(e);
  }
}

function eniView(n) {
  return {
    id: n.NetworkInterfaceId,
    primary: n.Primary,
    instanceId: n.Attachment ? n.Attachment.InstanceId : null,
    deviceIndex: n.Attachment ? n.Attachment.DeviceIndex : null,
    privateIps: n.PrivateIpAddressSet.map((p) => ({
      ip: p.PrivateIpAddress,
      primary: p.Primary,
      publicIp: p.PublicIpAddress,
      addressId: p.AddressId,
    })),
  };
}

function addressView(a) {
  return {
    status: a.AddressStatus,
    instanceId: a.InstanceId,
    networkInterfaceId: a.NetworkInterfaceId,
    privateIp: a.PrivateAddressIp,
    instanceType: a.InstanceType,
  };
}

async function describeAddress(id) {
  const r = await vpc.DescribeAddresses({ AddressIds: [id] });
  return addressView(r.AddressSet[0]);
}

async function allocate() {
  const r = await vpc.AllocateAddresses({ AddressType: "EIP" });
  await waitTask(r.TaskId);
  return r.AddressSet[0];
}

async function main() {
  const out = {};

  const exact = await vpc.DescribeNetworkInterfaces({
    Filters: [
      { Name: "vpc-id", Values: [vpcId] },
      { Name: "address-ip", Values: [podIp] },
      { Name: "ip-exact-match", Values: ["true"] },
    ],
  });
  out.exact = { total: exact.TotalCount, enis: exact.NetworkInterfaceSet.map(eniView) };
  const eni = exact.NetworkInterfaceSet[0].NetworkInterfaceId;
  const eniPrimaryIp = exact.NetworkInterfaceSet[0].PrivateIpAddressSet.find((p) => p.Primary).PrivateIpAddress;

  const fuzzy = await vpc.DescribeNetworkInterfaces({
    Filters: [{ Name: "vpc-id", Values: [vpcId] }, { Name: "address-ip", Values: [podIp] }],
  });
  out.fuzzy = { total: fuzzy.TotalCount };

  const page = await vpc.DescribeNetworkInterfaces({ Filters: [{ Name: "vpc-id", Values: [vpcId] }], Offset: 1, Limit: 1 });
  out.page = { total: page.TotalCount, returned: page.NetworkInterfaceSet.length };

  out.describeErrors = {
    coexist: await code(() => vpc.DescribeNetworkInterfaces({ NetworkInterfaceIds: [eni], Filters: [{ Name: "vpc-id", Values: [vpcId] }] })),
    badFilter: await code(() => vpc.DescribeNetworkInterfaces({ Filters: [{ Name: "colour", Values: ["red"] }] })),
    unknownId: await code(() => vpc.DescribeNetworkInterfaces({ NetworkInterfaceIds: ["eni-00000000"] })),
  };

  const pod = await allocate();
  const other = await allocate();
  const bind = await vpc.AssociateAddress({ AddressId: pod, NetworkInterfaceId: eni, PrivateIpAddress: podIp });
  out.bindTaskIdType = typeof bind.TaskId;
  await waitTask(bind.TaskId);
  out.bound = await describeAddress(pod);
  const afterBind = await vpc.DescribeNetworkInterfaces({ NetworkInterfaceIds: [eni] });
  out.eniAfterBind = eniView(afterBind.NetworkInterfaceSet[0]);
  const byPrivateIp = await vpc.DescribeAddresses({ Filters: [{ Name: "private-ip-address", Values: [podIp] }] });
  out.byPrivateIp = byPrivateIp.AddressSet.map((a) => a.AddressId);

  out.associateErrors = {
    privateIpTaken: await code(() => vpc.AssociateAddress({ AddressId: other, NetworkInterfaceId: eni, PrivateIpAddress: podIp })),
    ipNotOnEni: await code(() => vpc.AssociateAddress({ AddressId: other, NetworkInterfaceId: eni, PrivateIpAddress: "10.255.255.1" })),
    unknownEni: await code(() => vpc.AssociateAddress({ AddressId: other, NetworkInterfaceId: "eni-00000000", PrivateIpAddress: podIp })),
    bothTargets: await code(() =>
      vpc.AssociateAddress({ AddressId: other, InstanceId: "ins-00000000", NetworkInterfaceId: eni, PrivateIpAddress: podIp }),
    ),
    noPrivateIp: await code(() => vpc.AssociateAddress({ AddressId: other, NetworkInterfaceId: eni })),
    noTarget: await code(() => vpc.AssociateAddress({ AddressId: other })),
    // The bound address asked onto another private IP of the same ENI.
    boundElsewhere: await code(() => vpc.AssociateAddress({ AddressId: pod, NetworkInterfaceId: eni, PrivateIpAddress: eniPrimaryIp })),
  };

  const dangling = await vpc.DescribeNetworkInterfaces({ NetworkInterfaceIds: [danglingEni] });
  const danglingIp = dangling.NetworkInterfaceSet[0].PrivateIpAddressSet[0].PrivateIpAddress;
  const bindDangling = await vpc.AssociateAddress({ AddressId: other, NetworkInterfaceId: danglingEni, PrivateIpAddress: danglingIp });
  await waitTask(bindDangling.TaskId);
  out.boundDangling = await describeAddress(other);

  for (const id of [pod, other]) {
    const unbind = await vpc.DisassociateAddress({ AddressId: id });
    await waitTask(unbind.TaskId);
  }
  out.unbound = await describeAddress(pod);
  const afterUnbind = await vpc.DescribeNetworkInterfaces({ NetworkInterfaceIds: [eni] });
  out.eniAfterUnbind = eniView(afterUnbind.NetworkInterfaceSet[0]);

  const release = await vpc.ReleaseAddresses({ AddressIds: [pod, other] });
  await waitTask(release.TaskId);
  const left = await vpc.DescribeAddresses({});
  out.addressesLeft = left.TotalCount;

  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ fatal: String(e && e.message), code: e && e.code }) + "\n");
  process.exit(1);
});
