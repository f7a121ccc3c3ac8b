package aws_test

import (
	"context"
	"errors"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	epaws "github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/aws/fake"
)

func TestFindNetworkInterfaceForPodIPWithFakes(t *testing.T) {
	eni := func(id, instance, ip string, prefixes ...string) types.NetworkInterface {
		n := types.NetworkInterface{NetworkInterfaceId: awssdk.String(id), PrivateIpAddress: awssdk.String(ip)}
		if instance != "" {
			n.Attachment = &types.NetworkInterfaceAttachment{InstanceId: awssdk.String(instance)}
		}
		for _, p := range prefixes {
			n.Ipv4Prefixes = append(n.Ipv4Prefixes, types.Ipv4PrefixSpecification{Ipv4Prefix: awssdk.String(p)})
		}
		return n
	}
	byIP := func(m map[string][]types.NetworkInterface, byInstance []types.NetworkInterface) func(context.Context, *ec2.DescribeNetworkInterfacesInput, ...func(*ec2.Options)) (*ec2.DescribeNetworkInterfacesOutput, error) {
		return func(_ context.Context, in *ec2.DescribeNetworkInterfacesInput, _ ...func(*ec2.Options)) (*ec2.DescribeNetworkInterfacesOutput, error) {
			switch *in.Filters[0].Name {
			case "addresses.private-ip-address":
				return &ec2.DescribeNetworkInterfacesOutput{NetworkInterfaces: m[in.Filters[0].Values[0]]}, nil
			case "attachment.instance-id":
				return &ec2.DescribeNetworkInterfacesOutput{NetworkInterfaces: byInstance}, nil
			}
			return nil, errors.New("unexpected filter")
		}
	}
	cases := map[string]struct {
		mock      *fake.EC2API
		podIP     string
		wantENI   string
		wantNF    bool
		wantCalls []string
	}{
		"secondary IP: one call": {
			mock:      &fake.EC2API{MockDescribeNetworkInterfaces: byIP(map[string][]types.NetworkInterface{"10.0.0.9": {eni("eni-pod", "i-1", "10.0.0.9")}}, nil)},
			podIP:     "10.0.0.9",
			wantENI:   "eni-pod",
			wantCalls: []string{"DescribeNetworkInterfaces"},
		},
		"prefix delegation: node ENI, then the instance's ENIs": {
			mock: &fake.EC2API{MockDescribeNetworkInterfaces: byIP(
				map[string][]types.NetworkInterface{"10.0.0.1": {eni("eni-node", "i-1", "10.0.0.1")}},
				[]types.NetworkInterface{eni("eni-node", "i-1", "10.0.0.1"), eni("eni-prefix", "i-1", "10.0.0.2", "10.0.64.0/28")},
			)},
			podIP:     "10.0.64.5",
			wantENI:   "eni-prefix",
			wantCalls: []string{"DescribeNetworkInterfaces", "DescribeNetworkInterfaces", "DescribeNetworkInterfaces"},
		},
		"node ENI without an attachment": {
			mock: &fake.EC2API{MockDescribeNetworkInterfaces: byIP(
				map[string][]types.NetworkInterface{"10.0.0.1": {eni("eni-node", "", "10.0.0.1")}}, nil,
			)},
			podIP:     "10.0.64.5",
			wantNF:    true,
			wantCalls: []string{"DescribeNetworkInterfaces", "DescribeNetworkInterfaces"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := epaws.NewWithAPI(tc.mock).FindNetworkInterfaceForPodIP(context.Background(), "vpc-1", tc.podIP, "10.0.0.1")
			if tc.wantNF {
				if !epaws.IsNotFound(err) {
					t.Fatalf("err = %v, want NotFound", err)
				}
			} else if err != nil || got.ID != tc.wantENI {
				t.Fatalf("got %s, %v; want %s", got.ID, err, tc.wantENI)
			}
			if diff := cmp.Diff(tc.wantCalls, tc.mock.Calls); diff != "" {
				t.Fatalf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnmockedCallsFail(t *testing.T) {
	_, err := epaws.NewWithAPI(&fake.EC2API{}).DescribeAddresses(context.Background(), epaws.AddressQuery{})
	if err == nil {
		t.Fatal("an unmocked call succeeded")
	}
}
