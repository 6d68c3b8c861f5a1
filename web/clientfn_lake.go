package web

import (
	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake"
)

// The lake's client functions (docs/spec/interface.md 4.2), parameters named as in
// their signatures.
func (s *server) lakeFunctions() {
	s.function("get_file_details", auth.Read, s.fileDetails)
	s.function("get_collection_details", auth.Read, s.collectionDetails)
	s.function("get_item_list_from_datalake", auth.Read, s.itemListFromLake)
	s.function("get_item_list_from_collection", auth.Read, s.itemListFromCollection)
	s.function("get_item_count_from_lake", auth.Read, s.itemCountFromLake)
	s.function("get_item_count_from_collection", auth.Read, s.itemCountFromCollection)
}

func (s *server) fileDetails(c *echo.Context) error {
	var p struct {
		UniqueName   string          `json:"unique_name" validate:"required"`
		FieldsFilter map[string]bool `json:"fields_filter"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	d, err := s.Lake.FileDetails(c.Request().Context(), p.UniqueName, p.FieldsFilter)
	if err != nil {
		return err
	}
	return ok(c, d)
}

func (s *server) collectionDetails(c *echo.Context) error {
	var p struct {
		CollectionID string          `json:"collection_id" validate:"required"`
		FieldsFilter map[string]bool `json:"fields_filter"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	d, err := s.Lake.CollectionDetails(c.Request().Context(), p.CollectionID, p.FieldsFilter)
	if err != nil {
		return err
	}
	return ok(c, d)
}

// listParams are the parameters of the two listing functions.
type listParams struct {
	ItemType     *string      `json:"item_type"`
	CollectionID string       `json:"collection_id"`
	Query        string       `json:"query"`
	Filter       *lake.Filter `json:"filter"`
	PageIndex    *float64     `json:"page_index"`
	PageSize     *float64     `json:"page_size"`
	SortOrder    *lake.Sort   `json:"sort_order"`
}

// item is an element of a listing: uniqueName and url only for files.
type item struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	UniqueName string `json:"uniqueName,omitempty"`
	URL        string `json:"url,omitempty"`
}

func (s *server) itemListFromLake(c *echo.Context) error {
	var p struct {
		ItemType  *string      `json:"item_type"`
		Query     string       `json:"query"`
		Filter    *lake.Filter `json:"filter"`
		PageIndex *float64     `json:"page_index"`
		PageSize  *float64     `json:"page_size"`
		SortOrder *lake.Sort   `json:"sort_order"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	return s.list(c, listParams{ItemType: p.ItemType, Query: p.Query, Filter: p.Filter, PageIndex: p.PageIndex,
		PageSize: p.PageSize, SortOrder: p.SortOrder})
}

func (s *server) itemListFromCollection(c *echo.Context) error {
	var p struct {
		CollectionID string       `json:"collection_id" validate:"required"`
		Query        string       `json:"query"`
		Filter       *lake.Filter `json:"filter"`
		PageIndex    *float64     `json:"page_index"`
		PageSize     *float64     `json:"page_size"`
		SortOrder    *lake.Sort   `json:"sort_order"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	return s.list(c, listParams{CollectionID: p.CollectionID, Query: p.Query, Filter: p.Filter,
		PageIndex: p.PageIndex, PageSize: p.PageSize, SortOrder: p.SortOrder})
}

func (s *server) list(c *echo.Context, p listParams) error {
	sel := lake.Selection{CollectionID: p.CollectionID, Query: p.Query, Filter: p.Filter}
	if p.ItemType != nil {
		if *p.ItemType == "" {
			return errs.Invalid("item_type", "item_type is empty")
		}
		sel.ItemType = *p.ItemType
	}
	var sort lake.Sort
	if p.SortOrder != nil {
		sort = *p.SortOrder
	}
	idx, size, err := pageParams(p.PageIndex, p.PageSize)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	items := []item{}
	if lake.IsCollectionType(sel.ItemType) {
		cols, err := s.Lake.ListCollections(ctx, sel, idx, size, sort)
		if err != nil {
			return err
		}
		for _, col := range cols {
			items = append(items, item{ID: col.ID, Name: col.Name})
		}
		return ok(c, items)
	}
	files, err := s.Lake.ListFiles(ctx, sel, idx, size, sort)
	if err != nil {
		return err
	}
	for _, f := range files {
		items = append(items, item{ID: f.ID, Name: f.Name, UniqueName: f.UniqueName, URL: s.Lake.URL(f)})
	}
	return ok(c, items)
}

// pageParams reads page_index and page_size as the interface gives them
// (numbers, possibly doubles such as 2.0): absent takes the default (0, 20);
// an explicit value outside 0..MaxPageIndex or 1..MaxPageSize is a 400, never
// a clamp or a silent default, so page_size 0 does not quietly return 20 items.
func pageParams(index, size *float64) (int, int, error) {
	idx, err := pageNumber("page_index", index, 0, 0, lake.MaxPageIndex)
	if err != nil {
		return 0, 0, err
	}
	n, err := pageNumber("page_size", size, lake.DefaultPageSize, 1, lake.MaxPageSize)
	return idx, n, err
}

func pageNumber(field string, v *float64, def, lo, hi int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < float64(lo) || *v > float64(hi) {
		return 0, errs.Invalid(field, "%s must be in %d..%d, got %g", field, lo, hi, *v)
	}
	return wholeNumber(field, *v)
}

func (s *server) itemCountFromLake(c *echo.Context) error {
	var p struct {
		ItemType *string      `json:"item_type"`
		Query    string       `json:"query"`
		Filter   *lake.Filter `json:"filter"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	sel := lake.Selection{Query: p.Query, Filter: p.Filter}
	if p.ItemType != nil {
		if *p.ItemType == "" {
			return errs.Invalid("item_type", "item_type is empty")
		}
		sel.ItemType = *p.ItemType
	}
	return s.count(c, sel)
}

func (s *server) itemCountFromCollection(c *echo.Context) error {
	var p struct {
		CollectionID string       `json:"collection_id" validate:"required"`
		Query        string       `json:"query"`
		Filter       *lake.Filter `json:"filter"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	return s.count(c, lake.Selection{CollectionID: p.CollectionID, Query: p.Query, Filter: p.Filter})
}

func (s *server) count(c *echo.Context, sel lake.Selection) error {
	n, err := s.Lake.Count(c.Request().Context(), sel)
	if err != nil {
		return err
	}
	return ok(c, []map[string]int{{"count": n}})
}
