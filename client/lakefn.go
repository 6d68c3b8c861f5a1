package client

import "context"

// Filter narrows a lake selection (docs/spec/interface.md 2.6).
type Filter struct {
	AnnotationTypes []string `json:"annotation_types,omitempty"` // raw, human, machine (OR-ed)
	FromDate        string   `json:"from_date,omitempty"`        // YYYY-MM-DD, inclusive, UTC
	ToDate          string   `json:"to_date,omitempty"`
}

// SortOrder orders a listing; empty fields take the defaults (date_modified, DESC).
type SortOrder struct {
	SortByField string `json:"sort_by_field,omitempty"` // date_modified, date_created, name, size, video_index
	SortOrder   string `json:"sort_order,omitempty"`    // ASC or DESC
}

// ItemQuery selects and pages lake items; zero values take the interface's defaults.
type ItemQuery struct {
	ItemType  string     `json:"item_type,omitempty"` // default image
	Query     string     `json:"query,omitempty"`
	Filter    *Filter    `json:"filter,omitempty"`
	PageIndex int        `json:"page_index,omitempty"`
	PageSize  int        `json:"page_size,omitempty"` // default 20, at most 1000
	SortOrder *SortOrder `json:"sort_order,omitempty"`
}

// Item is a listed file or collection; UniqueName and URL are set for files.
type Item struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	UniqueName string `json:"uniqueName,omitempty"`
	URL        string `json:"url,omitempty"`
}

// GetFileDetails returns the fields of a file; fieldsFilter turns optional
// fields (and custom metadata keys) on and default fields off. nil gives the defaults.
func (c *Client) GetFileDetails(ctx context.Context, uniqueName string, fieldsFilter map[string]bool) (map[string]any, error) {
	var out map[string]any
	err := c.postJSON(ctx, "/api/v1/client/get_file_details",
		map[string]any{"unique_name": uniqueName, "fields_filter": fieldsFilter}, &out)
	return out, err
}

// GetCollectionDetails returns the fields of a collection.
func (c *Client) GetCollectionDetails(ctx context.Context, collectionID string, fieldsFilter map[string]bool) (map[string]any, error) {
	var out map[string]any
	err := c.postJSON(ctx, "/api/v1/client/get_collection_details",
		map[string]any{"collection_id": collectionID, "fields_filter": fieldsFilter}, &out)
	return out, err
}

// GetItemListFromDatalake lists lake items of q.ItemType.
func (c *Client) GetItemListFromDatalake(ctx context.Context, q ItemQuery) ([]Item, error) {
	var out []Item
	err := c.postJSON(ctx, "/api/v1/client/get_item_list_from_datalake", q, &out)
	return out, err
}

// GetItemListFromCollection lists the files of a collection (q.ItemType is not used).
func (c *Client) GetItemListFromCollection(ctx context.Context, collectionID string, q ItemQuery) ([]Item, error) {
	var out []Item
	err := c.postJSON(ctx, "/api/v1/client/get_item_list_from_collection", struct {
		CollectionID string     `json:"collection_id"`
		Query        string     `json:"query,omitempty"`
		Filter       *Filter    `json:"filter,omitempty"`
		PageIndex    int        `json:"page_index,omitempty"`
		PageSize     int        `json:"page_size,omitempty"`
		SortOrder    *SortOrder `json:"sort_order,omitempty"`
	}{collectionID, q.Query, q.Filter, q.PageIndex, q.PageSize, q.SortOrder}, &out)
	return out, err
}

// Count is the element of a count result: the interface returns a list
// holding one object {count} (docs/spec/interface.md 2.5).
type Count struct {
	Count int `json:"count"`
}

// GetItemCountFromLake counts lake items of itemType ("" for image) matching
// query and filter; the result is [{Count: N}] as the interface gives it.
func (c *Client) GetItemCountFromLake(ctx context.Context, itemType, query string, filter *Filter) ([]Count, error) {
	return c.count(ctx, "get_item_count_from_lake", map[string]any{"item_type": orNil(itemType), "query": query, "filter": filter})
}

// GetItemCountFromCollection counts the files of a collection matching query
// and filter; the result is [{Count: N}].
func (c *Client) GetItemCountFromCollection(ctx context.Context, collectionID, query string, filter *Filter) ([]Count, error) {
	return c.count(ctx, "get_item_count_from_collection", map[string]any{"collection_id": collectionID, "query": query, "filter": filter})
}

func (c *Client) count(ctx context.Context, fn string, params map[string]any) ([]Count, error) {
	for k, v := range params {
		if v == nil || v == (*Filter)(nil) {
			delete(params, k)
		}
	}
	var out []Count
	if err := c.postJSON(ctx, "/api/v1/client/"+fn, params, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
