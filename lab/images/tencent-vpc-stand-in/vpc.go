// Package vpc stands in for Tencent Cloud's VPC SDK package when lab/build-k8s.sh builds
// flanneld: the Go module proxy here does not serve that module, and flanneld links its
// Tencent Cloud VPC backend unconditionally. This package has only the names that
// backend uses, and every call fails, so flanneld built with it is flannel itself with
// the Tencent Cloud backend unusable (the lab uses host-gw). Nothing else is replaced.
package vpc

import "errors"

var errUnavailable = errors.New("the Tencent Cloud VPC backend is not available in this flanneld (kdeploy lab build)")

type Client struct{}

func NewClientWithSecretId(secretID, secretKey, region string) (*Client, error) {
	return nil, errUnavailable
}

type Filter struct {
	Name   *string
	Values []*string
}

type Route struct {
	DestinationCidrBlock *string
	GatewayType          *string
	GatewayId            *string
	RouteId              *uint64
	RouteType            *string
	Enabled              *bool
}

type RouteTable struct {
	RouteTableId *string
	RouteSet     []*Route
}

type DescribeRouteTablesRequest struct{ Filters []*Filter }

type DescribeRouteTablesResponse struct {
	Response *struct{ RouteTableSet []*RouteTable }
}

type DeleteRoutesRequest struct {
	RouteTableId *string
	Routes       []*Route
}

type CreateRoutesRequest struct {
	RouteTableId *string
	Routes       []*Route
}

type DeleteRoutesResponse struct{}
type CreateRoutesResponse struct{}

func NewDescribeRouteTablesRequest() *DescribeRouteTablesRequest { return &DescribeRouteTablesRequest{} }
func NewDeleteRoutesRequest() *DeleteRoutesRequest               { return &DeleteRoutesRequest{} }
func NewCreateRoutesRequest() *CreateRoutesRequest               { return &CreateRoutesRequest{} }

func (c *Client) DescribeRouteTables(*DescribeRouteTablesRequest) (*DescribeRouteTablesResponse, error) {
	return nil, errUnavailable
}
func (c *Client) DeleteRoutes(*DeleteRoutesRequest) (*DeleteRoutesResponse, error) {
	return nil, errUnavailable
}
func (c *Client) CreateRoutes(*CreateRoutesRequest) (*CreateRoutesResponse, error) {
	return nil, errUnavailable
}
