package deps

import (
	_ "github.com/aws/aws-sdk-go-v2/aws"
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/credentials"
	_ "github.com/aws/aws-sdk-go-v2/service/ec2"
	_ "github.com/aws/smithy-go"
	_ "github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	_ "github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	_ "github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	_ "github.com/crossplane/crossplane/apis/v2/core/v2"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	_ "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	_ "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tag/v20180813"
	_ "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
	_ "golang.org/x/time/rate"
	_ "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/controller-runtime/pkg/manager"
	_ "sigs.k8s.io/yaml"
)
